"""Prometheus's text format read from an untrusted exporter (gui/core/prometheus_text.py): recorded dcgm-exporter
and nvitop-exporter answers, the format's corners (escapes, timestamps, NaN/Inf, comments), hostile bodies bounded
and said in words, and the exporter URL the user types."""

from __future__ import annotations

import math

import pytest
from exporter_server import DCGM_P40X2, NVITOP_V100

from gui.core.preferences import GPU_EXPORTERS
from gui.core.prometheus_text import (
    MAX_EXPORTERS,
    MAX_LINE_CHARS,
    ExpositionError,
    parse,
    parse_value,
    scrape_url,
    scrape_urls,
)


def test_recorded_dcgm_exporter_answer() -> None:
    exposition = parse(DCGM_P40X2.read_bytes())
    assert exposition.bad_lines == 0 and not exposition.problems
    temps = exposition.named("DCGM_FI_DEV_GPU_TEMP")
    assert [(s.labels["gpu"], s.value) for s in temps] == [("0", 78.0), ("1", 41.0)]
    first = temps[0].labels
    assert first["modelName"] == "Tesla P40" and first["Hostname"] == "gpu-box"
    assert first["UUID"].startswith("GPU-3b0f0d8a") and first["DCGM_FI_DRIVER_VERSION"] == "535.183.01"
    # DCGM's "blank" (no reading) is a number like any other at this level: 2^63 - 14.
    assert exposition.named("DCGM_FI_DEV_MEMORY_TEMP")[0].value == float(9223372036854775794)
    xid = exposition.named("DCGM_FI_DEV_XID_ERRORS")[0]
    assert xid.labels["err_msg"] == "No Error"


def test_recorded_nvitop_exporter_answer_with_only_the_names_asked() -> None:
    exposition = parse(NVITOP_V100.read_bytes(), {"gpu_temperature_C", "gpu_fan_speed_Percentage"})
    assert {s.name for s in exposition.series} == {"gpu_temperature_C", "gpu_fan_speed_Percentage"}
    temp = exposition.named("gpu_temperature_C")[0]
    assert temp.value == 86.0
    assert temp.labels == {
        "hostname": "10.0.0.7",
        "index": "0",
        "devicename": "Tesla V100-SXM2-16GB",
        "uuid": "GPU-5d2c8f3e-7b1a-4c9d-a0e2-6f4b3c2d1e0f",
    }
    assert math.isnan(exposition.named("gpu_fan_speed_Percentage")[0].value)
    # Every line was read (the process metrics' long labels included), none of it was a problem.
    assert exposition.lines == len(NVITOP_V100.read_text().splitlines()) + 1 and exposition.bad_lines == 0


def test_the_formats_corners() -> None:
    text = (
        "# a comment\n"
        "#HELP not quite a HELP line, still a comment\n"
        "\n"
        '  spaced{ a="1" , b="x" , } 2.5e3 1700000000000\n'
        'escaped{path="C:\\\\gpu\\\\0",quote="say \\"hi\\"",nl="a\\nb",odd="\\t"} -1\n'
        "bare 7\n"
        "inf_up +Inf\n"
        "inf_down -inf\n"
        "nan NaN\n"
        "negative_time 1 -5\n"
        "no_newline_at_end 3"
    )
    exposition = parse(text)
    assert not exposition.problems
    by_name = {s.name: s for s in exposition.series}
    assert by_name["spaced"].labels == {"a": "1", "b": "x"}
    assert by_name["spaced"].value == 2500.0 and by_name["spaced"].timestamp_ms == 1_700_000_000_000
    escaped = by_name["escaped"].labels
    assert escaped == {"path": "C:\\gpu\\0", "quote": 'say "hi"', "nl": "a\nb", "odd": "\\t"}
    assert by_name["bare"].labels == {} and by_name["bare"].timestamp_ms is None
    assert by_name["inf_up"].value == math.inf and by_name["inf_down"].value == -math.inf
    assert math.isnan(by_name["nan"].value)
    assert by_name["negative_time"].timestamp_ms == -5
    assert by_name["no_newline_at_end"].value == 3.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [("42", 42.0), ("-0.5", -0.5), (".5", 0.5), ("1e3", 1000.0), ("1.5E-2", 0.015), ("+Inf", math.inf)],
)
def test_values(value: str, expected: float) -> None:
    assert parse_value(value) == expected


@pytest.mark.parametrize("value", ["1_000", "0x10", "abc", "1e", "--1", "1.2.3", "", "Infinityy", "9" * 100])
def test_malformed_values_are_refused_in_words(value: str) -> None:
    with pytest.raises(ValueError, match=r"not a number|longer than"):
        parse_value(value)


def test_malformed_lines_are_skipped_counted_and_the_first_said() -> None:
    text = (
        "good 1\n"
        'temp{gpu="0"} 1_000\n'  # line 2: Python would read it, Prometheus does not
        'temp{gpu="0" 5\n'  # line 3: labels not closed
        "temp{gpu=0} 5\n"  # line 4: unquoted label value
        '{"quoted.name"} 1\n'  # line 5: UTF-8 name syntax, not read here
        "temp 1 2 3\n"  # line 6
        'temp{gpu="0",gpu="1"} 1\n'  # line 7: a label twice
        "also_good 2\n"
    )
    exposition = parse(text)
    assert [s.name for s in exposition.series] == ["good", "also_good"]
    assert exposition.bad_lines == 6
    assert exposition.problems == (
        "line 2 was skipped: '1_000' is not a number",
        "line 3 was skipped: the labels have no closing brace",
        "line 4 was skipped: the label 'gpu' has no quoted value",
        "3 more lines were skipped",
    )


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data"),
        (b"temp 1\n\xff\xfe garbage\n", "not UTF-8 text \\(byte 7"),
        (b"a" * (4 << 20) + b"!", "larger than 4 MiB"),
    ],
)
def test_a_body_that_is_not_prometheus_text_is_refused_in_words(body: bytes, why: str) -> None:
    with pytest.raises(ExpositionError, match=why):
        parse(body)


def test_an_endless_line_is_skipped_not_held() -> None:
    body = b"temp 1\n" + b"9" * (3 << 20) + b"\nafter 2\n"
    exposition = parse(body)
    assert [s.name for s in exposition.series] == ["temp", "after"]
    assert exposition.problems == (f"line 2 was skipped: longer than {MAX_LINE_CHARS} characters",)


def test_too_many_lines_and_series_are_cut_and_said() -> None:
    body = "".join(f'temp{{gpu="{i}"}} {i}\n' for i in range(500))
    by_series = parse(body, max_series=100)
    assert len(by_series.series) == 100 and by_series.cut == 400
    assert "400 series or lines past the first 100 series" in by_series.problems[-1]
    by_lines = parse(body, max_lines=50)
    assert len(by_lines.series) == 50 and by_lines.cut > 0


def test_label_values_and_label_counts_are_bounded() -> None:
    long_value = parse('temp{name="' + "x" * 5000 + '"} 1\n')
    assert not long_value.series and "longer than 1024 characters" in long_value.problems[0]
    many = parse("temp{" + ",".join(f'l{i}="v"' for i in range(100)) + "} 1\n")
    assert not many.series and "more than 64 labels" in many.problems[0]


# --- the exporter URL --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("http://gpu-box:9400/metrics", "http://gpu-box:9400/metrics"),
        ("  http://GPU-Box:9400  ", "http://gpu-box:9400/metrics"),  # the path both exporters serve
        ("https://10.0.0.7:5050/", "https://10.0.0.7:5050/metrics"),
        ("http://[fe80::1]:9400/metrics?x=1#top", "http://[fe80::1]:9400/metrics?x=1"),
    ],
)
def test_exporter_urls(typed: str, url: str) -> None:
    assert scrape_url(typed) == url


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("", "no URL given"),
        ("gpu-box:9400", "no http:// or https:// in front \\(e.g. http://gpu-box:9400/metrics\\)"),
        ("ftp://gpu-box/metrics", "only http and https are read, not 'ftp'"),
        ("file:///etc/passwd", "only http and https are read"),
        ("http:///metrics", "names no host"),
        ("http://me:secret@gpu-box:9400/", "user name or password"),
        ("http://gpu-box:99999/", "not a URL with a valid port"),
        ("http://gpu-box:0/", "port must be a number from 1 to 65535"),
        ("http://gpu box/", "spaces or control characters"),
        ("http://gpu-box/\x00", "spaces or control characters"),
        ("http://gpu-box/" + "a" * 3000, "longer than 2048 characters"),
    ],
)
def test_bad_exporter_urls_are_refused_in_words(typed: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        scrape_url(typed)


def test_the_stored_list_keeps_the_good_urls_once() -> None:
    stored = ["http://a:9400", "ftp://b/", 7, "http://a:9400/metrics", *(f"http://h{i}:9400" for i in range(30))]
    kept = scrape_urls(stored)
    assert kept[0] == "http://a:9400/metrics" and len(kept) == MAX_EXPORTERS
    assert all(url.startswith("http://") for url in kept) and len(set(kept)) == len(kept)
    assert GPU_EXPORTERS.parse(stored) == kept and GPU_EXPORTERS.default == []
    with pytest.raises(ValueError, match="list of URLs"):
        GPU_EXPORTERS.parse("http://a:9400")
