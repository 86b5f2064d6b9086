"""The named chat formats: how each lays a conversation out (as llama.cpp's built-in of the same name does),
how a format is recognised from a template or a vocabulary, and which one a model without a usable template
gets, and why."""

from __future__ import annotations

import ctypes

import pytest

from gui.core.chat_formats import (
    CHATML,
    FORMATS,
    GEMMA,
    LLAMA3,
    MISTRAL_V7_TEKKEN,
    MODEL_FORMAT,
    PHI3,
    ChatFormat,
    detect_format,
    format_from_vocab,
    format_label,
)
from gui.core.chat_template import choose_template, render_chat, stand_in, template_for
from gui.core.preferences import CHAT_FORMATS
from gui.core.protocol import ChatMessage

SYSTEM = ChatMessage("system", "Be brief.")
USER = ChatMessage("user", "Hi there")
ASSISTANT = ChatMessage("assistant", "Hello!")
USER2 = ChatMessage("user", "What is 2+2?")
CONVERSATION = [SYSTEM, USER, ASSISTANT, USER2]


def render(chat_format: ChatFormat, messages: list[ChatMessage], add_generation_prompt: bool = True) -> str:
    return render_chat(
        chat_format.template,
        messages,
        bos_token="<s>",
        eos_token="</s>",
        add_generation_prompt=add_generation_prompt,
    )


EXPECTED = {
    "chatml": "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
    "<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    # No system turn: the system prompt opens the first user turn.
    "gemma": "<start_of_turn>user\nBe brief.\n\nHi there<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n"
    "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n",
    "llama3": "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "phi3": "<|system|>\nBe brief.<|end|>\n<|user|>\nHi there<|end|>\n<|assistant|>\nHello!<|end|>\n"
    "<|user|>\nWhat is 2+2?<|end|>\n<|assistant|>\n",
    "mistral-v7-tekken": "[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT][INST]Hi there[/INST]Hello!</s>"
    "[INST]What is 2+2?[/INST]",
}


def test_every_format_is_tested() -> None:
    assert set(EXPECTED) == set(FORMATS)


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_renders_a_conversation_and_ends_turns_with_its_end_of_turn(name: str) -> None:
    chat_format = FORMATS[name]
    assert render(chat_format, CONVERSATION) == EXPECTED[name]
    # The text a reply stops at is the text that ends the assistant's turns in the prompt.
    assert "Hello!" + chat_format.end_of_turn in EXPECTED[name]
    assert render(chat_format, [USER]).count("Hi there") == 1


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_lays_out_as_llamas_built_in_of_the_same_name(name: str) -> None:
    # llama.cpp's own formatter (llama_chat_apply_template with a built-in name, no model needed), on text with
    # the whitespace some formats trim and others keep.
    import llama_cpp

    messages = [
        ChatMessage("system", " Be brief. "),
        ChatMessage("user", "Hi there \n"),
        ChatMessage("assistant", "\nHello!"),
        ChatMessage("user", " What is 2+2?"),
    ]
    chat = (llama_cpp.llama_chat_message * len(messages))()
    for slot, message in zip(chat, messages, strict=True):
        slot.role, slot.content = message.role.encode(), message.content.encode()
    buf = ctypes.create_string_buffer(4096)
    n = llama_cpp.llama_chat_apply_template(name.encode(), chat, len(messages), True, buf, len(buf))
    assert 0 < n < len(buf)
    assert render(FORMATS[name], messages) == buf.raw[:n].decode()


def test_labels_say_whose_format() -> None:
    assert format_label(MODEL_FORMAT) == "the model's own"
    assert format_label("gemma") == "Gemma" and format_label("llama3") == "Llama 3"


# ---- recognising a format ------------------------------------------------------------------------


def test_a_template_is_recognised_by_its_markers_as_llama_does() -> None:
    assert detect_format("{{ '<|im_start|>' + m.role }}") is CHATML
    assert detect_format("{{ '<start_of_turn>' + role }}") is GEMMA
    assert detect_format("{{ '<|start_header_id|>' + r + '<|end_header_id|>' }}") is LLAMA3
    assert detect_format("{{ '<|user|>' }}{{ '<|assistant|>' }}{{ '<|end|>' }}") is PHI3
    assert detect_format("[SYSTEM_PROMPT]{{ s }}[/SYSTEM_PROMPT][INST]") is MISTRAL_V7_TEKKEN
    assert detect_format("  gemma ") is GEMMA  # a built-in's name in place of a template
    # SmolVLM's template opens with <|im_start|> but its turns end with <end_of_utterance>.
    assert detect_format("<|im_start|>User: {{ c }}<end_of_utterance>") is None
    assert detect_format("[INST] {{ c }} [/INST]") is None  # older Mistral and Llama 2: not a format we have
    assert detect_format("{% for m in messages %}{{ m.content }}{% endfor %}") is None


def vocab(*special: str) -> tuple[list[str], object]:
    asked: list[str] = []

    def is_special(text: str) -> bool:
        asked.append(text)
        return text in special

    return asked, is_special


def test_the_vocabulary_tells_the_format_by_its_turn_markers() -> None:
    assert format_from_vocab(vocab("<start_of_turn>", "<end_of_turn>", "<bos>")[1]) is GEMMA  # type: ignore[arg-type]
    assert format_from_vocab(vocab(*LLAMA3.markers)[1]) is LLAMA3  # type: ignore[arg-type]
    assert format_from_vocab(vocab(*PHI3.markers)[1]) is PHI3  # type: ignore[arg-type]
    # One marker of a pair is not the format.
    assert format_from_vocab(vocab("<start_of_turn>", "<|start_header_id|>")[1]) is None  # type: ignore[arg-type]
    # A fine-tune that added ChatML's markers to a Llama 3 vocabulary was trained on ChatML.
    assert format_from_vocab(vocab(*LLAMA3.markers, *CHATML.markers)[1]) is CHATML  # type: ignore[arg-type]


def test_the_vocabulary_is_asked_about_known_markers_only_once_each() -> None:
    asked, is_special = vocab()
    assert format_from_vocab(is_special) is None  # type: ignore[arg-type]
    markers = {m for f in FORMATS.values() for m in f.markers}
    assert len(asked) == len(set(asked)) and set(asked) <= markers
    assert len(asked) <= 16


# ---- choosing one ---------------------------------------------------------------------------------


def test_no_template_and_gemma_markers_format_as_gemma_and_say_why() -> None:
    chosen = choose_template(None, vocab_format=GEMMA)
    assert chosen.format == "gemma" and chosen.text == GEMMA.template and chosen.stops == ("<end_of_turn>",)
    assert chosen.reason == (
        "No chat template in this file: formatting as Gemma (the vocabulary has Gemma's turn markers)."
    )
    assert chosen.label == "Gemma" and chosen.is_fallback


def test_no_template_and_no_known_markers_format_as_chatml_and_say_so() -> None:
    chosen = choose_template("", vocab_format=None)
    assert chosen.format == "chatml" and chosen.stops == ("<|im_end|>",)
    assert chosen.reason.startswith("No chat template in this file: formatting as ChatML")
    assert "none of the turn markers" in chosen.reason and "Chat format" in chosen.reason


def test_the_built_in_llama_picks_for_a_file_comes_first() -> None:
    # llama_model_chat_template names mistral-v7-tekken for Mistral Small 2503, whose files have no template.
    chosen = choose_template("mistral-v7-tekken", vocab_format=CHATML, builtin_names={"mistral-v7-tekken", "chatml"})
    assert chosen.format == "mistral-v7-tekken" and chosen.stops == ("</s>",)
    assert chosen.reason == (
        "This file has no chat template of its own: formatting as Mistral (v7 Tekken), "
        "the format llama.cpp picks for this model."
    )


def test_a_built_in_name_tightfit_lacks_falls_to_the_vocabulary() -> None:
    chosen = choose_template("vicuna", vocab_format=LLAMA3, builtin_names={"vicuna", "llama3"})
    assert chosen.format == "llama3"
    assert chosen.reason.startswith("This file names llama.cpp's built-in chat format 'vicuna'")
    assert chosen.reason.endswith("formatting as Llama 3 (the vocabulary has Llama 3's turn markers).")


def test_the_tool_use_template_stands_in_for_a_missing_default_as_in_llama() -> None:
    tool_use = "{% for m in messages %}{{ '<|im_start|>' ~ m.role ~ '\\n' ~ m.content ~ '<|im_end|>\\n' }}{% endfor %}"
    chosen = choose_template(None, tool_use=tool_use, vocab_format=GEMMA)
    assert chosen.format == MODEL_FORMAT and chosen.text == tool_use and chosen.stops == ("<|im_end|>",)
    assert "tool-use template" in chosen.reason
    # An unusable one does not.
    assert choose_template(None, tool_use="{% for %}", vocab_format=GEMMA).format == "gemma"


def test_an_unusable_template_says_why_and_what_stands_in() -> None:
    chosen = choose_template("{% for m in messages %}{{ m.content }", vocab_format=LLAMA3)
    assert chosen.format == "llama3"
    assert chosen.reason.startswith("The model's chat template cannot be used (syntax error on line 1")
    assert chosen.reason.endswith("formatting as Llama 3 (the vocabulary has Llama 3's turn markers).")


def test_the_models_own_template_stops_where_its_family_ends_a_turn() -> None:
    own = choose_template("{% for m in messages %}{{ '<start_of_turn>' ~ m.content ~ '<end_of_turn>' }}{% endfor %}")
    assert own.format == MODEL_FORMAT and not own.reason and own.stops == ("<end_of_turn>",)
    assert own.label == "the model's own"
    assert choose_template("{% for m in messages %}{{ m.content }}{% endfor %}").stops == ()


def test_a_format_picked_by_name() -> None:
    picked = template_for("gemma")
    assert picked.format == "gemma" and picked.text == GEMMA.template and not picked.reason
    with pytest.raises(ValueError, match="unknown chat format 'klingon'"):
        template_for("klingon")
    assert stand_in("The model's chat template failed", None).format == "chatml"


def test_the_per_model_choice_keeps_only_known_formats() -> None:
    stored = {"a.gguf": "gemma", "b.gguf": "klingon", "c.gguf": 3, "d.gguf": "llama3"}
    assert CHAT_FORMATS.parse(stored) == {"a.gguf": "gemma", "d.gguf": "llama3"}
