"""The chat formats Tightfit knows by name, for models whose file has no usable chat template.

Each format is a small Jinja template of our own, rendered in the same sandbox as a model's template
(gui/core/template_sandbox.py), with the text that ends a turn in it. The names are llama.cpp's names
for its built-in versions (``llama_chat_builtin_templates``), and the templates lay a conversation out
as those built-ins do (``llm_chat_apply_template`` in llama.cpp's src/llama-chat.cpp). Like them they do
not write the BOS token: the tokenizer adds it when the vocabulary asks for one.

Which format a model speaks is read from two places:

- **its template text**, the way llama.cpp's ``llm_chat_detect_template`` recognises a family by the
  markers the text contains (:func:`detect_format`): for a model's own template this tells which text
  ends its turns;
- **its vocabulary**, when the file has no usable template: a model trained on a format has that
  format's turn markers as special tokens (:func:`format_from_vocab`). Each marker is asked about at most
  once, a dozen short strings in all, so the cost does not grow with the vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gui.core.words import Text, words

__all__ = [
    "CHATML",
    "FORMATS",
    "GEMMA",
    "LLAMA3",
    "MISTRAL_V7_TEKKEN",
    "MODEL_FORMAT",
    "PHI3",
    "ChatFormat",
    "detect_format",
    "format_from_vocab",
    "format_label",
    "parse_format_name",
]

# The name a choice goes by when the model's own template formats the conversation.
MODEL_FORMAT = "model"


@dataclass(frozen=True)
class ChatFormat:
    name: str  # llama.cpp's name for its built-in version of the format
    label: str  # for people
    template: str  # Jinja source
    end_of_turn: str  # the text that ends a turn: a reply stops there, however the model spells it
    markers: tuple[str, ...]  # special tokens every vocabulary trained on this format has


CHATML = ChatFormat(
    "chatml",
    "ChatML",
    "{% for m in messages %}"
    "{{ '<|im_start|>' ~ m['role'] ~ '\\n' ~ m['content'] ~ '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
    "<|im_end|>",
    ("<|im_start|>", "<|im_end|>"),
)

# Gemma has no system role: the system prompt opens the first user turn, and the assistant is "model".
GEMMA = ChatFormat(
    "gemma",
    "Gemma",
    "{% set ns = namespace(system='') %}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{% set ns.system = ns.system ~ (m['content'] | trim) %}"
    "{% else %}"
    "{% set role = 'model' if m['role'] == 'assistant' else m['role'] %}"
    "{{ '<start_of_turn>' ~ role ~ '\\n' }}"
    "{% if ns.system and role != 'model' %}{{ ns.system ~ '\\n\\n' }}{% set ns.system = '' %}{% endif %}"
    "{{ (m['content'] | trim) ~ '<end_of_turn>\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}",
    "<end_of_turn>",
    ("<start_of_turn>", "<end_of_turn>"),
)

LLAMA3 = ChatFormat(
    "llama3",
    "Llama 3",
    "{% for m in messages %}"
    "{{ '<|start_header_id|>' ~ m['role'] ~ '<|end_header_id|>\\n\\n' ~ (m['content'] | trim) ~ '<|eot_id|>' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}",
    "<|eot_id|>",
    ("<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"),
)

PHI3 = ChatFormat(
    "phi3",
    "Phi-3",
    "{% for m in messages %}"
    "{{ '<|' ~ m['role'] ~ '|>\\n' ~ m['content'] ~ '<|end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}",
    "<|end|>",
    ("<|user|>", "<|assistant|>", "<|end|>"),
)

# Mistral Small 3 and later: llama.cpp picks this one for Mistral-Small-2503, whose files have no template.
# The prompt ends with [/INST]: the reply follows it directly.
MISTRAL_V7_TEKKEN = ChatFormat(
    "mistral-v7-tekken",
    "Mistral (v7 Tekken)",
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ '[SYSTEM_PROMPT]' ~ m['content'] ~ '[/SYSTEM_PROMPT]' }}"
    "{% elif m['role'] == 'user' %}{{ '[INST]' ~ m['content'] ~ '[/INST]' }}"
    "{% else %}{{ m['content'] ~ '</s>' }}"
    "{% endif %}"
    "{% endfor %}",
    "</s>",
    ("[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[INST]", "[/INST]"),
)

# In the order the vocabulary is asked about them. ChatML comes first: only families trained on ChatML or a close
# variant have <|im_start|> in their own vocabulary (Qwen, SmolLM, Phi-4), so finding it in, say, a Llama 3
# vocabulary means a fine-tune added it to train on ChatML, whatever the base model's own markers.
FORMATS: Mapping[str, ChatFormat] = {f.name: f for f in (CHATML, GEMMA, LLAMA3, PHI3, MISTRAL_V7_TEKKEN)}


def format_label(name: str) -> Text:
    """How a format is named to the user: "the model's own" for the file's template, else its label."""
    if name == MODEL_FORMAT:
        return words("the model's own")
    known = FORMATS.get(name)
    return known.label if known is not None else name


def parse_format_name(value: object) -> str:
    """A format name from outside (a settings file, a message); ValueError if it names none."""
    if not isinstance(value, str) or value not in FORMATS:
        raise ValueError(f"unknown chat format {value!r}")
    return value


def detect_format(template: str) -> ChatFormat | None:
    """The family a chat template belongs to, told by its markers in the order llama.cpp's
    ``llm_chat_detect_template`` checks them; None for a template of another family.

    A template that is just a format's name (llama.cpp accepts one in place of a template) is that format.
    """
    named = FORMATS.get(template.strip())
    if named is not None:
        return named
    if "<|im_start|>" in template:
        # SmolVLM opens with <|im_start|> but is not ChatML; Phi-4 ends its turns with <|im_end|> as ChatML does.
        return None if "<end_of_utterance>" in template else CHATML
    if template.startswith("mistral") or "[INST]" in template:
        return MISTRAL_V7_TEKKEN if "[SYSTEM_PROMPT]" in template else None
    if "<|assistant|>" in template and "<|end|>" in template:
        return PHI3
    if "<start_of_turn>" in template:
        return GEMMA
    if "<|start_header_id|>" in template and "<|end_header_id|>" in template:
        return LLAMA3
    return None


def format_from_vocab(is_special_token: Callable[[str], bool]) -> ChatFormat | None:
    """The first format (in FORMATS order) whose every marker is a special token of the vocabulary.

    ``is_special_token(text)`` answers for one marker; none is asked about twice.
    """
    answers: dict[str, bool] = {}

    def has(marker: str) -> bool:
        if marker not in answers:
            answers[marker] = is_special_token(marker)
        return answers[marker]

    return next((f for f in FORMATS.values() if all(has(m) for m in f.markers)), None)
