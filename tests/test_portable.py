"""A recorded comparison as one portable file: `anoman-tui export ID --format recording`
and `anoman-tui import FILE` round trips, streamed for real against the local gateway
(and a scripted server for a reset), and a corpus of hostile files refused in one line."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from anoman_tui import cli
from anoman_tui.config import login_name
from anoman_tui.gateway.embedded import EmbeddedGateway
from anoman_tui.history import ComparisonRecord, HistoryStore, PaneRecord, pane_record, portable
from anoman_tui.history.portable import (
    DOCUMENT_FORMAT,
    PortableRefused,
    comparison_document,
    read_comparison_document,
)
from anoman_tui.report import export
from anoman_tui.streaming import ChatTurn, EndpointFormat, StreamClient, StreamRequest, TextDelta
from anoman_tui.streaming.cost import Cost
from tests.helpers import LocalGateways
from tests.replay_server import ReplayServer, Script

ROOT = Path(__file__).resolve().parents[1]
KEY = "anm-sk-portable-secret-7d6c5b4a3f2e"
# No ANOMAN_* variable of the developer's reaches the commands these tests run.
pytestmark = pytest.mark.usefixtures("clean_env")
FAST = "ttft=0,rate=4000"

# Each comparison: its endpoint format and, per pane, how it is made to end.
CASES: dict[str, tuple[EndpointFormat, tuple[str, ...]]] = {
    "openai": ("openai", (FAST, f"{FAST},interrupt-after=3", f"{FAST},drop-after=3")),
    "anthropic": ("anthropic", (FAST, f"{FAST},stall-after=2", f"{FAST},status=429")),
    "playground": ("playground", (FAST, f"{FAST},malformed-after=3", "cancel")),
    "broken": ("openai", (FAST, "reset", "unreachable")),
}


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _pane(gateway: str, scripted: str, number: int, endpoint: EndpointFormat,
                how: str) -> PaneRecord:
    base_url, model, headers = gateway, "anoman-lite", [("X-Anoman-Simulate", how)]
    if how == "reset":  # the connection reset mid-stream, after a body echoing the key
        base_url, model, headers = scripted, "resets", []
    elif how == "unreachable":
        base_url, headers = f"http://127.0.0.1:{_free_port()}", []
    elif how == "cancel":
        headers = [("X-Anoman-Simulate", "ttft=0,rate=400,tokens=60")]
    request = StreamRequest(
        base_url=base_url, api_key=KEY, endpoint=endpoint, model=model, pane=number,
        messages=(ChatTurn(role="user", content="Tell me about tides"),), record=True,
        idle_timeout=0.3, extra_headers=tuple(headers))
    async with StreamClient() as client:
        stream = client.stream(request)
        texts = 0
        async for event in stream:
            if isinstance(event, TextDelta):
                texts += 1
                if how == "cancel" and texts == 3:
                    stream.cancel()
        assert stream.result is not None and stream.result.recording is not None
        return pane_record(number, model, base_url=base_url, endpoint=endpoint,
                           result=stream.result, temperature=0.5, max_tokens=300,
                           rate_series=(0.0, 12.5, 40.0), cost=Cost(Decimal("0.0001"), "gateway"),
                           conversation=(("user", "hi"), ("assistant", "hello")),
                           target="local")


async def _make_cases(gateway: str, store: HistoryStore) -> dict[str, int]:
    server = ReplayServer()
    await server.start()
    # (an SSE comment echoing the key: in the bytes, never in the answer)
    server.scripts["resets"] = Script(
        body=[b": your key is " + KEY.encode() + b"\n\n",
              b'data: {"choices":[{"index":0,"delta":{"content":"The tide"},'
              b'"finish_reason":null}]}\n\n', 0.01], ending="reset")
    try:
        ids = {}
        for name, (endpoint, hows) in CASES.items():
            panes = await asyncio.gather(*(
                _pane(gateway, server.base_url, n, endpoint, how)
                for n, how in enumerate(hows, 1)))
            ids[name] = store.save(ComparisonRecord(
                prompt=f"Tides, {name}", panes=tuple(panes), system_prompt="Be brief.",
                conversation=(("user", "hi"), ("assistant", "hello")),
                created_at=time.time(), source="compare"))
        return ids
    finally:
        await server.stop()


@pytest.fixture(scope="module")
def gateway(make_module_gateway: LocalGateways) -> EmbeddedGateway:
    return make_module_gateway(time_scale=1.0, api_key=KEY)


@pytest.fixture(scope="module")
def source(gateway: EmbeddedGateway, tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[Path, dict[str, int]]:
    """A data home whose history holds every case, recorded: (its path, name -> id)."""
    home = tmp_path_factory.mktemp("source")
    with HistoryStore.open(home / "anoman-tui" / "history.sqlite3") as store:
        ids = asyncio.run(_make_cases(gateway.base_url, store))
        plain = store.get(ids["openai"])
        assert plain is not None
        ids["unrecorded"] = store.save(replace(plain, id=None, recorded=False))
        panes = store.recordings(ids["openai"])
        ids["hidden"] = store.save(replace(plain, id=None, blind=True, panes=tuple(
            replace(p, label="ABC"[p.pane - 1], recording=panes[p.pane]) for p in plain.panes)))
    return home, ids


def run(home: Path, *args: str) -> tuple[int, str, str]:
    """The command in this process (fast), with `home` as XDG_DATA_HOME."""
    out, err = io.StringIO(), io.StringIO()
    env = {"XDG_DATA_HOME": str(home), "ANOMAN_CONFIG": os.devnull, "ANOMAN_API_KEY": KEY}
    before = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(args))
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    return code, out.getvalue(), err.getvalue()


def history(home: Path) -> HistoryStore:
    return HistoryStore.open(home / "anoman-tui" / "history.sqlite3")


def exported(source: tuple[Path, dict[str, int]], name: str, tmp_path: Path) -> Path:
    home, ids = source
    path = tmp_path / f"{name}.anoman-recording.json"
    code, out, err = run(home, "export", str(ids[name]), "--format", "recording", "-o", str(path))
    assert (code, err) == (0, ""), err
    assert out == f"wrote {path}\n"
    return path


@pytest.mark.parametrize("name", list(CASES))
def test_round_trip_into_another_history(source: tuple[Path, dict[str, int]], name: str,
                                         tmp_path: Path) -> None:
    home, ids = source
    path = exported(source, name, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    code, out, err = run(elsewhere, "import", str(path))
    assert (code, err) == (0, ""), err
    assert out.startswith("imported as comparison 1: Tides, ")
    assert out.endswith("(3 panes, recorded)\n")
    with history(home) as src, history(elsewhere) as dst:
        original, imported = src.get(ids[name]), dst.get(1)
        assert original is not None and imported is not None
        # An imported comparison is the importer's (the `user` setting: here the login
        # name); the portable file carries no author.
        assert imported == replace(original, id=1, source="import", user=login_name())
        assert imported.recorded
        recorded, replayable = src.recordings(ids[name]), dst.recordings(1)
    assert replayable == recorded and set(recorded) == {1, 2, 3}
    for pane, recording in recorded.items():
        assert json.dumps(replayable[pane].to_json()) == json.dumps(recording.to_json())
        assert replayable[pane].body == recording.body


def test_the_cases_cover_every_way_a_stream_ends(source: tuple[Path, dict[str, int]]) -> None:
    home, ids = source
    endings, kinds, formats = set(), set(), set()
    with history(home) as store:
        for name in CASES:
            record = store.get(ids[name])
            assert record is not None
            formats |= {p.endpoint for p in record.panes}
            kinds |= {p.failure["kind"] if p.failure else p.status for p in record.panes}
            endings |= {r.ending for r in store.recordings(ids[name]).values()}
    assert formats == {"openai", "anthropic", "playground"}
    assert endings == {"completed", "closed", "reset", "stalled", "cancelled"}
    assert kinds == {"completed", "stream_error", "truncated", "stalled", "http_error",
                     "protocol_error", "transport_error", "cancelled"}


def test_the_key_is_nowhere_in_the_file(source: tuple[Path, dict[str, int]],
                                        tmp_path: Path) -> None:
    for name in CASES:
        data = exported(source, name, tmp_path).read_bytes()
        assert KEY.encode() not in data and KEY[-12:].encode() not in data
        record = read_comparison_document(data)
        for pane in record.panes:
            assert pane.recording is not None
            assert KEY.encode() not in pane.recording.body  # not even base64-encoded
    reset = read_comparison_document(exported(source, "broken", tmp_path).read_bytes())
    echoed = reset.panes[1].recording
    assert echoed is not None and b"your key is ****" in echoed.body


def test_a_key_echoed_into_an_answer_is_masked_in_the_file(
        source: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """The history keeps an answer as it came, a key a server echoed included: the file
    masks every key the exporter's settings know, in the answer and in the bytes."""
    home, ids = source
    with history(home) as store:
        record = store.get(ids["openai"])
        recordings = store.recordings(ids["openai"])
        assert record is not None
        echoed = store.save(replace(record, id=None, prompt=f"is {KEY} mine?", panes=tuple(
            replace(p, text=f"Your key {KEY} works.", failure=p.failure and {
                **p.failure, "detail": f"bad key {KEY}"}, recording=replace(
                    recordings[p.pane],
                    reads=((recordings[p.pane].ended_at, f"key={KEY}".encode()),)))
            for p in record.panes)))
    path = tmp_path / "echoed.json"
    code, _, err = run(home, "export", str(echoed), "-f", "recording", "-o", str(path))
    assert code == 0, err
    data = path.read_bytes()
    assert KEY.encode() not in data
    back = read_comparison_document(data)
    masked = "*" * (len(KEY) - 4) + KEY[-4:]
    assert back.prompt == f"is {masked} mine?"
    assert back.panes[0].text == f"Your key {masked} works."
    assert back.panes[1].failure is not None and masked in back.panes[1].failure["detail"]
    assert back.panes[0].recording is not None
    assert back.panes[0].recording.body == f"key={masked}".encode()


def test_export_to_stdout_and_the_file_is_ascii(source: tuple[Path, dict[str, int]]) -> None:
    home, ids = source
    code, out, err = run(home, "export", str(ids["openai"]), "-f", "recording", "-o", "-")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["format"] == DOCUMENT_FORMAT and document["version"] == 1
    assert out.isascii() and out.endswith("}\n") and out.count("\n") == 1
    assert [p["pane"] for p in document["panes"]] == [1, 2, 3]


def test_a_gzip_file_is_written_and_read(source: tuple[Path, dict[str, int]],
                                         tmp_path: Path) -> None:
    import gzip

    home, ids = source
    plain = exported(source, "anthropic", tmp_path).read_bytes()
    packed = tmp_path / "small.anoman-recording.json.gz"
    assert run(home, "export", str(ids["anthropic"]), "-f", "recording", "-o", str(packed))[0] == 0
    assert gzip.decompress(packed.read_bytes()) == plain
    assert len(packed.read_bytes()) * 5 < len(plain)
    code, out, err = run(tmp_path / "elsewhere", "import", str(packed))
    assert code == 0 and out.startswith("imported as comparison 1: "), err
    assert "not valid gzip" in refused(b"\x1f\x8bnot gzip at all")
    assert "cut short" in refused(packed.read_bytes()[:200])


def test_a_gzip_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip

    monkeypatch.setattr(portable, "MAX_FILE_BYTES", 1_000_000)
    bomb = gzip.compress(b" " * 5_000_000)
    assert len(bomb) < 10_000
    assert "expands to more than 1,000,000 bytes" in refused(bomb)


def test_default_file_name(source: tuple[Path, dict[str, int]], tmp_path: Path,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    home, ids = source
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(home, "export", str(ids["anthropic"]), "--format", "recording")
    name = f"comparison-{ids['anthropic']}.anoman-recording.json"
    assert code == 0 and out == f"wrote {name}\n" and (tmp_path / name).is_file()


@pytest.mark.parametrize(("name", "says"), [
    ("unrecorded", "its streams were not recorded"),
    ("hidden", "blind round not voted on yet"),
])
def test_export_refuses_what_cannot_be_shared(source: tuple[Path, dict[str, int]], name: str,
                                             says: str, tmp_path: Path) -> None:
    home, ids = source
    target = tmp_path / "out.json"
    code, out, err = run(home, "export", str(ids[name]), "-f", "recording", "-o", str(target))
    assert code == 2 and out == "" and not target.exists()
    assert err.count("\n") == 1 and says in err
    assert err.startswith(f"anoman-tui export: comparison {ids[name]} cannot be exported as a "
                          "recording: ")


def test_a_voted_blind_round_travels_with_its_vote(source: tuple[Path, dict[str, int]],
                                                   tmp_path: Path) -> None:
    home, ids = source
    with history(home) as store:
        hidden = store.get(ids["hidden"])
        assert hidden is not None
        voted = store.save(replace(hidden, id=None, panes=tuple(
            replace(p, recording=r) for p, r in
            zip(hidden.panes, store.recordings(ids["hidden"]).values(), strict=True))))
        store.cast_vote(voted, "win", 2, blind=True, voted_at=1234.5)
        original = store.get(voted)
    assert original is not None and original.vote is not None and not original.hidden
    path = tmp_path / "voted.json"
    assert run(home, "export", str(voted), "-f", "recording", "-o", str(path))[0] == 0
    elsewhere = tmp_path / "elsewhere"
    assert run(elsewhere, "import", str(path))[0] == 0
    with history(elsewhere) as dst:
        assert original.vote is not None
        assert dst.get(1) == replace(original, id=1, source="import", user=login_name(),
                                     vote=replace(original.vote, user=login_name()))


def test_an_import_that_arrives_twice_is_recognised_and_its_vote_counts_once(
        source: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    home, ids = source
    with history(home) as store:
        hidden = store.get(ids["hidden"])
        assert hidden is not None
        voted = store.save(replace(hidden, id=None, panes=tuple(
            replace(p, recording=r) for p, r in
            zip(hidden.panes, store.recordings(ids["hidden"]).values(), strict=True))))
        store.cast_vote(voted, "win", 2, blind=True, voted_at=1234.5)
        uid = store.get(voted).uid  # type: ignore[union-attr]
    path = tmp_path / "voted.json"
    assert run(home, "export", str(voted), "-f", "recording", "-o", str(path))[0] == 0
    assert json.loads(path.read_text())["uid"] == uid
    # A file written before files carried a uid: recognised by its fingerprint.
    old = json.loads(path.read_text())
    del old["uid"]
    old_path = tmp_path / "old.json"
    old_path.write_text(json.dumps(old))
    elsewhere = tmp_path / "elsewhere"
    assert run(elsewhere, "import", str(path))[:2] == (
        0, "imported as comparison 1: Tides, openai (3 panes, recorded)\n")
    assert run(elsewhere, "import", str(path)) == (
        0, "already in the history as comparison 1: nothing imported\n", "")
    assert run(elsewhere, "import", str(old_path))[1].startswith("imported as comparison 2")
    assert run(elsewhere, "import", str(old_path))[1] == (
        "already in the history as comparison 2: nothing imported\n")
    # Back into the history it came from: that comparison is there already.
    assert run(home, "import", str(path))[1] == (
        f"already in the history as comparison {voted}: nothing imported\n")
    with history(elsewhere) as dst:
        assert len(dst.recent(100)) == 2
        assert sum(r.count for r in dst.voted_rounds()) == 2
        first = dst.get(1)
        assert first is not None and first.uid == uid


# -- hostile files ---------------------------------------------------------------


@pytest.fixture(scope="module")
def valid(source: tuple[Path, dict[str, int]]) -> dict[str, Any]:
    home, ids = source
    with history(home) as store:
        record = store.get(ids["openai"])
        assert record is not None
        return comparison_document(record, store.recordings(ids["openai"]))


def refused(document: object) -> str:
    data = document if isinstance(document, bytes | str) else json.dumps(document)
    with pytest.raises(PortableRefused) as caught:
        read_comparison_document(data)
    reason = caught.value.reason
    assert "\n" not in reason and reason.endswith(".") and len(reason) < 300, reason
    return reason


def _wrong(value: Any) -> Any:
    """A value of another JSON type than `value`."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, str):
        return 12345
    if isinstance(value, int | float):
        return "1"
    if value is None:
        return ["x"]
    return "x"


TOP_FIELDS = ["prompt", "system_prompt", "conversation", "created_at", "source", "blind",
              "vote", "panes"]
PANE_FIELDS = ["pane", "model", "target", "base_url", "endpoint", "temperature", "max_tokens",
               "scenario", "status", "committed", "text", "reasoning", "finish_reason",
               "failure", "usage", "anoman", "metrics", "rate_series",
               "conversation", "label", "recording"]
# Added after the first files were written: a file without them still reads.
LATER_PANE_FIELDS = ["cost", "cost_text", "provider_cost_usd", "simulated"]
LATER_TOP_FIELDS = ["uid"]


def test_the_valid_document_reads_back(valid: dict[str, Any]) -> None:
    record = read_comparison_document(json.dumps(valid))
    assert [p.pane for p in record.panes] == [1, 2, 3] and record.recorded
    assert set(valid) == {"format", "version", *TOP_FIELDS, *LATER_TOP_FIELDS}
    assert set(valid["panes"][0]) == {*PANE_FIELDS, *LATER_PANE_FIELDS}
    assert record.uid == valid["uid"]


@pytest.mark.parametrize("uid", ["", "x" * 65, "no spaces", 7, "é"])
def test_a_uid_that_is_not_one_is_refused(valid: dict[str, Any], uid: Any) -> None:
    assert "uid" in refused({**valid, "uid": uid})


@pytest.mark.parametrize("field", TOP_FIELDS)
def test_every_top_field_wrong_or_missing_is_refused(valid: dict[str, Any], field: str) -> None:
    document = copy.deepcopy(valid)
    document[field] = _wrong(valid[field])
    assert field in refused(document) or "panes" in field
    del document[field]
    assert repr(field) in refused(document)


@pytest.mark.parametrize("field", PANE_FIELDS)
@pytest.mark.parametrize("pane", [0, 2])
def test_every_pane_field_wrong_or_missing_is_refused(valid: dict[str, Any], field: str,
                                                      pane: int) -> None:
    document = copy.deepcopy(valid)
    document["panes"][pane][field] = _wrong(valid["panes"][pane][field])
    refused(document)
    del document["panes"][pane][field]
    assert repr(field) in refused(document)


@pytest.mark.parametrize("field", ["cost", "provider_cost_usd", "simulated"])
def test_a_later_pane_field_of_the_wrong_shape_is_refused(valid: dict[str, Any],
                                                          field: str) -> None:
    for wrong in ("x", 3, ["x"], {"usd": "-1", "source": "gateway"},
                  {"usd": None, "source": "gateway"}, {"usd": "1", "source": "hidden"}):
        if field == "simulated" and wrong == 3:
            continue
        document = copy.deepcopy(valid)
        document["panes"][0][field] = wrong
        assert field in refused(document)


def test_the_cost_is_read_as_a_value_and_simulated_kept(valid: dict[str, Any]) -> None:
    document = copy.deepcopy(valid)
    document["panes"][0].update(cost={"usd": "0.000123", "source": "provider"},
                                cost_text="ignored when cost is there",
                                provider_cost_usd="0.000123", simulated=True)
    pane = read_comparison_document(json.dumps(document)).panes[0]
    assert pane.cost == Cost(Decimal("0.000123"), "provider")
    assert pane.provider_cost == Decimal("0.000123") and pane.simulated is True


@pytest.mark.parametrize(("shown", "cost"), [
    ("$0.000041", Cost(Decimal("0.000041"), "gateway")),
    ("$0.000060 (provider)", Cost(Decimal("0.000060"), "provider")),
    ("~$0.000038 (est.)", Cost(Decimal("0.000038"), "estimate")),
    ("—", Cost()),
    ("something else", Cost()),
])
def test_a_file_from_before_the_cost_value_reads_its_cost_text(
        valid: dict[str, Any], shown: str, cost: Cost) -> None:
    document = copy.deepcopy(valid)
    for field in LATER_PANE_FIELDS:
        del document["panes"][0][field]
    document["panes"][0]["cost_text"] = shown
    pane = read_comparison_document(json.dumps(document)).panes[0]
    assert pane.cost == cost and pane.simulated is False and pane.provider_cost is None
    del document["panes"][0]["cost_text"]
    assert "'cost_text'" in refused(document)


def _set(valid: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    document = copy.deepcopy(valid)
    where = document
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = value
    return document


def _header(valid: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(valid)
    document["panes"][0]["recording"]["headers"].append(["authorization", "Bearer " + KEY])
    return document


@pytest.mark.parametrize(("change", "says"), [
    (lambda v: _set(v, ("format",), "anoman-stream-recording"), "not a comparison recording"),
    (lambda v: _set(v, ("version",), 2), "reads version 1"),
    (lambda v: _set(v, ("version",), 0), "not a version"),
    (lambda v: _set(v, ("version",), "1"), "not an integer"),
    (lambda v: _set(v, ("version",), True), "not an integer"),
    (lambda v: _set(v, ("panes",), []), "1 to 9 panes"),
    (lambda v: _set(v, ("panes",), v["panes"] * 4), "1 to 9 panes"),
    (lambda v: _set(_set(v, ("panes", 1, "pane"), 1), ("panes", 1, "recording", "pane"), 1),
     "pane 1 twice"),
    (lambda v: _set(v, ("panes", 1, "pane"), 10), "from 1 to 9"),
    (lambda v: _set(v, ("panes", 1, "pane"), True), "from 1 to 9"),
    (lambda v: _set(v, ("panes", 1, "recording"), None), "has no recording"),
    (lambda v: _set(v, ("panes", 1, "model"), "claude-sonnet-4-6"), "recording is of"),
    (lambda v: _set(v, ("panes", 1, "recording", "model"), "gpt-other"), "recording is of"),
    (lambda v: _set(v, ("panes", 1, "recording", "pane"), 3), "recording is of pane 3"),
    (lambda v: _set(v, ("panes", 1, "endpoint"), "anthropic"), "recording is of"),
    (lambda v: _set(v, ("panes", 1, "endpoint"), "grpc"), "openai, anthropic, playground"),
    (lambda v: _set(v, ("panes", 1, "status"), "exploded"), "completed, failed, cancelled"),
    (lambda v: _set(v, ("panes", 0, "failure"), {"kind": "stalled"}), "completed, yet"),
    (lambda v: _set(v, ("panes", 1, "failure"), None), "failed, yet has no failure"),
    (lambda v: _set(v, ("panes", 1, "failure"), {"kind": "boom"}), "no kind"),
    (lambda v: _set(v, ("panes", 0, "temperature"), -1), "negative"),
    (lambda v: _set(v, ("panes", 0, "max_tokens"), 0), "max_tokens"),
    (lambda v: _set(v, ("panes", 0, "metrics", "ttft_s"), "fast"), "not a number"),
    (lambda v: _set(v, ("panes", 0, "metrics", "ttft_s"), 10**30), "not a number"),
    (lambda v: _set(v, ("panes", 0, "metrics", "chunks"), 1.5), "not an integer"),
    (lambda v: _set(v, ("panes", 0, "rate_series"), [1, -2]), "0 or more"),
    (lambda v: _set(v, ("panes", 0, "usage"), {"n": 10**40}), "too large"),
    (lambda v: _set(v, ("panes", 0, "anoman"), {"a": [[[[[[[[[[1]]]]]]]]]]}), "nests deeper"),
    (lambda v: _set(v, ("panes", 0, "model"), "anoman-lite\x1b[2J"), "control characters"),
    (lambda v: _set(v, ("panes", 0, "conversation"), [["system", "x"]]), "turn 0"),
    (lambda v: _set(v, ("conversation",), [["user"]]), "turn 0"),
    (lambda v: _set(v, ("prompt",), ""), "prompt is empty"),
    (lambda v: _set(v, ("created_at",), -5), "negative"),
    (lambda v: _set(v, ("blind",), True), "blind round not voted on"),
    (lambda v: _set(v, ("vote",), {"blind": False, "outcome": "win", "winner_pane": 7,
                                   "voted_at": 1.0}), "pane 7"),
    (lambda v: _set(v, ("vote",), {"blind": False, "outcome": "tie", "winner_pane": 1,
                                   "voted_at": 1.0}), "winner only for a win"),
    (lambda v: _set(v, ("vote",), {"blind": False, "outcome": "meh", "winner_pane": None,
                                   "voted_at": 1.0}), "win, tie, bad"),
    (_header, "header 'authorization'"),
    (lambda v: _set(v, ("panes", 0, "recording", "reads"), [[0.1, "!!not base64"]]),
     "not valid base64"),
])
def test_hostile_documents_are_refused_with_one_sentence(valid: dict[str, Any], change: Any,
                                                         says: str) -> None:
    assert says in refused(change(valid))


def test_hostile_text_encodings_and_numbers_are_refused(valid: dict[str, Any]) -> None:
    text = json.dumps(valid, separators=(",", ":"))
    assert "NaN" in refused(text.replace('"temperature":0.5', '"temperature":NaN', 1))
    assert "Infinity" in refused(text.replace('"temperature":0.5', '"temperature":-Infinity',
                                              1))
    assert "finite" in refused(text.replace('"temperature":0.5', '"temperature":1e999', 1))
    assert "surrogate" in refused(text.replace('"prompt":"', '"prompt":"\\ud800', 1))
    assert "UTF-8" in refused(text.encode()[:100] + b"\xff\xfe" + text.encode()[100:])
    assert "empty" in refused(b"") and "empty" in refused(b" \n\t")
    assert "not JSON" in refused("hello, not JSON {")
    assert "not a JSON object" in refused("[" * 10 + "]" * 10)
    assert "too deeply" in refused("[" * 100_000 + "]" * 100_000)
    assert "too deeply" in refused('{"a":' * 100_000 + "1" + "}" * 100_000)


def test_sizes_are_capped(valid: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps(valid)
    monkeypatch.setattr(portable, "MAX_TEXT", 10)
    assert "longer than 10 characters" in refused(text)
    monkeypatch.setattr(portable, "MAX_FILE_BYTES", 1000)
    assert "larger than 1,000 bytes" in refused(text)


def test_garbage_is_refused_never_crashes(valid: dict[str, Any]) -> None:
    """Every prefix-cut and every byte flip of a valid file: refused or read, nothing else."""
    data = json.dumps(valid).encode()
    for cut in range(0, len(data), max(1, len(data) // 300)):
        with contextlib.suppress(PortableRefused):
            read_comparison_document(data[:cut])
    for at in range(0, len(data), max(1, len(data) // 300)):
        flipped = data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1:]
        with contextlib.suppress(PortableRefused):
            read_comparison_document(flipped)


# -- the command with hostile files ------------------------------------------------


@pytest.mark.parametrize(("content", "says"), [
    (b"", "the file is empty."),
    (b"\x89PNG\r\n\x1a\n\x00\x00garbage\xff", "the file is not UTF-8 text."),
    (b"[" * 10 + b"]" * 10, "the file is not a JSON object."),
    (b"[" * 100_000 + b"]" * 100_000, "too deeply"),
    (b'{"format": "anoman-comparison-recording", "version": 99}', "reads version 1"),
])
def test_import_refuses_in_one_line_and_saves_nothing(tmp_path: Path, content: bytes,
                                                      says: str) -> None:
    path = tmp_path / "hostile.json"
    path.write_bytes(content)
    home = tmp_path / "home"
    code, out, err = run(home, "import", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"anoman-tui import: {path}: ") and says in err
    assert err.count("\n") == 1
    assert not (home / "anoman-tui").exists()  # the history was never opened


def test_import_refuses_a_huge_file_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:  # sparse: 300 MB that take no disk
        handle.truncate(300 * 1024 * 1024)
    code, _, err = run(tmp_path / "home", "import", str(path))
    assert code == 2 and "larger than 268,435,456 bytes" in err and err.count("\n") == 1


def test_import_of_a_missing_file_and_an_unusable_history(source: tuple[Path, dict[str, int]],
                                                          tmp_path: Path) -> None:
    code, _, err = run(tmp_path, "import", str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read it" in err and err.count("\n") == 1
    path = exported(source, "openai", tmp_path)
    home = tmp_path / "home"
    (home / "anoman-tui" / "history.sqlite3").mkdir(parents=True)  # not a file
    code, out, err = run(home, "import", str(path))
    assert code == 1 and out == "" and err.startswith("anoman-tui import: ")
    assert err.count("\n") == 1


def test_hostile_answer_is_inert_in_the_reports(valid: dict[str, Any], tmp_path: Path) -> None:
    hostile = "<script>alert(1)</script> \x1b]52;c;aGVsbG8=\x07 [bold]markup[/]"
    document = _set(valid, ("panes", 0, "text"), hostile)
    document["prompt"] = "\x1b[2J\x1b]0;pwned\x07Explain tides"
    path = tmp_path / "hostile.json"
    path.write_text(portable.dumps(document))
    home = tmp_path / "home"
    code, out, err = run(home, "import", str(path))
    assert code == 0, err
    assert out == "imported as comparison 1: Explain tides (3 panes, recorded)\n"
    with history(home) as store:
        record = store.get(1)
    assert record is not None and record.panes[0].text == hostile  # stored as it came
    page = export(record, "html")
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert "[bold]markup[/]" in page and "<b>markup" not in page
    code, markdown, _ = run(home, "export", "1", "--format", "md", "-o", "-")
    assert code == 0
    assert "<script>alert(1)</script>" in markdown and "[bold]markup[/]" in markdown


def test_import_from_stdin_in_a_real_process(source: tuple[Path, dict[str, int]],
                                             tmp_path: Path) -> None:
    data = exported(source, "playground", tmp_path).read_bytes()
    env = dict(os.environ)  # clean_env: no ANOMAN_* of ours
    env.update(PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(tmp_path / "home"),
               ANOMAN_CONFIG=os.devnull)
    for content, code in ((data, 0), (b"\x00" * 64, 2)):
        done = subprocess.run([sys.executable, "-m", "anoman_tui.cli", "import", "-"],
                              input=content, capture_output=True, env=env, timeout=60)
        assert done.returncode == code, done.stderr
        assert b"Traceback" not in done.stderr
    assert done.stderr.startswith(b"anoman-tui import: -: ")
    with history(tmp_path / "home") as store:
        assert [c.id for c in store.recent()] == [1]
