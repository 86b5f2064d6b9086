"""Chat templates written to exhaust time or memory, for the sandbox's tests and bench/hostile_inputs.py.

Importable as ``tests.hostile_templates`` and as ``hostile_templates``.

Each payload is sized against the limits it will run under: ``BIG`` stands for a string length just
under the largest value a template may hold, ``MANY`` for a list length whose elements still fit under
it, and ``HUGE`` for a number far past any limit. A template that reaches a limit must fail with a
ChatTemplateError; ``guard`` holds words of the message of the bound meant to stop it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAYLOADS", "Payload"]

HUGE = 10**12


@dataclass(frozen=True)
class Payload:
    name: str
    template: str  # with BIG, MANY and HUGE standing for numbers
    guard: str | None  # words of the error that stops it; None: it is bounded by its input and renders
    at_compile: bool = False  # constant enough for Jinja to evaluate while compiling
    repeat: int = 1  # the template is this many copies of ``template``

    def text(self, max_value_chars: int) -> str:
        big = max_value_chars * 9 // 10
        many = max_value_chars // 100
        one = self.template.replace("HUGE", str(HUGE)).replace("MANY", str(many)).replace("BIG", str(big))
        return one * self.repeat


def _nested(body: str, depth: int = 2, over: str = "range(99999)") -> str:
    """``body`` inside ``depth`` loops over ``over``: more steps than any budget, no output."""
    return "".join(f"{{%- for i{d} in {over} -%}}" for d in range(depth)) + body + "{%- endfor -%}" * depth


_SHARED = "{%- set ns = namespace(a=['a'], b=['a']) -%}{%- for i in range(64) -%}{%- set ns.a = [ns.a, ns.a] -%}"
_SHARED += "{%- set ns.b = [ns.b, ns.b] -%}{%- endfor -%}"

# The words of the error each payload must end with (the bound that stops it, with the test limits).
STEPS = "steps"
LIMIT = "longer than the limit"
ADDED_UP = "added up"
ENORMOUS = "enormous"

PAYLOADS: tuple[Payload, ...] = (
    # -- every iteration counts ---------------------------------------------------------------
    Payload("loop over a string", _nested("", over='"a" * BIG'), STEPS),
    Payload("loop over a product of messages", _nested("", over="messages * MANY"), STEPS),
    Payload(
        "recursive loop",
        "{%- for x in [1, 1, 1, 1, 1, 1, 1, 1] recursive -%}{%- if loop.depth < 13 -%}"
        "{{- loop([1, 1, 1, 1, 1, 1, 1, 1]) -}}{%- endif -%}{%- endfor -%}",
        STEPS,
    ),
    Payload(
        "cycler and joiner",
        "{%- set c = cycler(*('ab' * MANY)) -%}{%- set j = joiner('x' * BIG) -%}"
        + _nested("{%- set s = j() ~ c.next() -%}"),
        ADDED_UP,
    ),
    Payload("map over a string", _nested("{%- set x = ('a' * BIG)|map('upper')|list -%}", depth=1), STEPS),
    Payload("select over a string", _nested("{%- set x = ('a' * BIG)|select('==', 'b')|list -%}", depth=1), STEPS),
    Payload("sum of lists", "{{ ([[1]] * MANY)|sum(start=[])|length }}", ADDED_UP),
    Payload("dictsort", "{%- set d = {}.fromkeys(range(99999)) -%}" + _nested("{%- set x = d|dictsort -%}", 1), STEPS),
    Payload("unique", _nested("{%- set x = range(99999)|unique|list -%}", depth=1), STEPS),
    Payload("slice into countless parts", "{{ [1]|slice(HUGE)|list|length }}", STEPS),
    Payload("batch with a fill value", "{{ [1]|batch(HUGE, 0)|list|length }}", LIMIT),
    # -- no output, still bounded (with the steps unbounded, the deadline stops it) -----------
    Payload("tight loop without output", _nested("{%- set x = i1 -%}"), STEPS),
    # -- widths, precisions and growth --------------------------------------------------------
    Payload("center", "{{ bos_token|center(HUGE) }}", LIMIT),
    Payload("center of a safe string", "{{ (bos_token|safe).center(HUGE) }}", LIMIT),
    Payload("urlize", "{{ ('www.x.com ' * MANY)|urlize(target='t' * BIG) }}", LIMIT),
    Payload("title of many words", _nested("{%- set x = ('ab ' * MANY)|title -%}", depth=1), STEPS),
    Payload("indent", "{{ (bos_token ~ '\\nx' * MANY)|indent(BIG) }}", LIMIT),
    Payload("format filter width", "{{ (bos_token ~ '%HUGEd')|format(1) }}", LIMIT),
    Payload("% width", "{{ (bos_token ~ '%HUGEd') % 1 }}", LIMIT),
    Payload("% star precision", "{{ (bos_token ~ '%.*f') % (HUGE, 1.0) }}", LIMIT),
    Payload("str.format width", "{{ (bos_token ~ '{:HUGE}').format(1) }}", LIMIT),
    Payload("truncate", "{{ (bos_token ~ 'a' * BIG)|truncate(HUGE, true, 'b' * BIG) }}", None),
    Payload("wordwrap of one long word", "{{ (bos_token ~ 'a' * BIG)|wordwrap(1) }}", STEPS),
    Payload("wordwrap string", "{{ (bos_token ~ 'a b ' * MANY)|wordwrap(1, true, 'x' * BIG) }}", LIMIT),
    Payload("round precision", "{{ (bos_token|length + 1.5)|round(HUGE, 'floor') }}", ENORMOUS),
    Payload("filesizeformat", "{{ (10 ** 400 + bos_token|length)|filesizeformat }}", "OverflowError"),
    Payload("expandtabs", "{{ ('\\t' * BIG).expandtabs(BIG) }}", LIMIT),
    Payload("replace", "{{ ('a' * BIG)|replace('a', 'b' * BIG) }}", LIMIT),
    Payload("join filter", "{{ ('a' * BIG)|join('b' * BIG) }}", STEPS),
    Payload("join method", "{{ ('b' * BIG).join('a' * BIG) }}", STEPS),
    Payload("translate", "{{ ('a' * BIG).translate({97: 'b' * BIG}) }}", LIMIT),
    Payload("int.to_bytes", "{{ (1).to_bytes(HUGE, 'big') }}", LIMIT),
    Payload("strftime width", "{{ strftime_now('%9999Y' * 2000) }}", "field width"),
    Payload("lipsum", "{{ lipsum(HUGE) }}", LIMIT),
    Payload("tojson indent", "{{ [[[['a'] * MANY]]]|tojson(indent=BIG) }}", LIMIT),
    Payload(
        "repeated squaring",
        "{%- set ns = namespace(x=10) -%}{%- for i in range(40) -%}{%- set ns.x = ns.x * ns.x -%}{%- endfor -%}",
        ENORMOUS,
    ),
    Payload("power tower", "{{ ((10 ** 1000) ** 1000) ** 1000 }}", ENORMOUS),
    # -- values that share their parts --------------------------------------------------------
    Payload("shared parts printed", _SHARED + "{{ ns.a }}", LIMIT),
    Payload("shared parts compared", _SHARED + "{{ ns.a == ns.b }}", LIMIT),
    Payload("shared parts by *", "{{ (['a' * BIG] * BIG)|string|length }}", LIMIT),
    Payload(
        "doubling with ~",
        "{%- set ns = namespace(s='ab') -%}{%- for i in range(64) -%}{%- set ns.s = ns.s ~ ns.s -%}{%- endfor -%}",
        LIMIT,
    ),
    Payload(
        "doubling with replace",
        "{%- set ns = namespace(s='ab') -%}{%- for i in range(64) -%}{%- set ns.s = ns.s|replace('a', 'aa') -%}"
        "{%- endfor -%}",
        LIMIT,
    ),
    # -- text kept aside: set blocks and macros -----------------------------------------------
    Payload("set block of values", "{%- set x -%}" + _nested("{{ 'y' * BIG }}", 1) + "{%- endset -%}", LIMIT),
    Payload("set block of text", "{%- set x -%}" + _nested("y" * 1000, 1) + "{%- endset -%}", LIMIT),
    Payload(
        "recursive macro holding text",
        "{%- macro m(n) -%}{%- set s = bos_token ~ 'a' * BIG -%}{{ m(n + 1) }}{%- endmacro -%}{{ m(0) }}",
        ADDED_UP,
    ),
    Payload("endless recursion", "{%- macro m() -%}{{ m() }}{%- endmacro -%}{{ m() }}", "recursed"),
    Payload(
        "block text called in a loop",
        "{%- if false -%}{%- block b -%}"
        + _nested("y" * 1000, 1)
        + "{%- endblock -%}{%- endif -%}"
        + _nested("{%- set x = self.b() -%}", 1),
        "may not call its blocks",
    ),
    # -- folded while compiling, or too big to compile ----------------------------------------
    Payload("constant % width", "{{ '%999999999d' % 1 }}", LIMIT, at_compile=True),
    Payload("constant center", "{{ 'x'|center(999999999) }}", LIMIT, at_compile=True),
    Payload("constant indent", "{{ 'a\\nb'|indent(999999999) }}", LIMIT, at_compile=True),
    Payload("constant round", "{{ 1.5|round(100000000, 'floor') }}", ENORMOUS, at_compile=True),
    Payload("constant product", "{{ 'a' * 10 ** 12 }}", LIMIT, at_compile=True),
    Payload("constant range", "{{ range(10 ** 12)|list }}", "Range too big", at_compile=True),
    Payload("15 MB of template", "{{ bos_token }}", "characters long", at_compile=True, repeat=1_000_000),
    Payload("nested loops", "{% for a in [1] %}" * 30 + "x" + "{% endfor %}" * 30, "too deeply", at_compile=True),
)
