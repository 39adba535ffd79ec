"""An OpenAI-compatible model provider on loopback that answers, or fails, as a test tells it.

Real HTTP: LiteLLM and the OpenAI client talk to it exactly as to a hosted provider. Modes, per
kind of request (`chat`, `embeddings`):

- `ok`: a valid answer, `answer` (streamed when asked: a server-sent event per word, `chunk_seconds`
  apart, then the usage when asked for), vectors of `dimensions` numbers;
- `401`: invalid key; `429`: rate limited with `Retry-After: retry_after` (1 s); `500`: server
  error;
- `hang`: never answers (until the provider is stopped); `close`: drops the connection unanswered;
- `truncated`: HTTP 200 and `application/json`, but the body is a chat completion cut in half (for a
  streamed request too: a provider or proxy that answers JSON and drops the connection midway);
- `not_json`: a valid chat completion whose content is NOT_JSON, prose where graphrag asked for JSON
  (a report).

Some prompts only: `fail_prompts(text, mode, times)` answers the chat requests whose messages
contain `text` (REPORT_PROMPT, SUMMARY_PROMPT, EXTRACTION_PROMPT) in `mode`, the first `times` of
them (None: every one), whatever `modes["chat"]` says; `count_prompts(text)` counts the chat
requests containing it, `count(kind)` all of a kind.

A chat model that follows graphrag's extraction prompt (EXTRACTION) unless `extracts=False`: then it
answers that prompt like any other, with `answer` (a model that writes prose).
"""

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise

EXTRACTION = {
    "entity_description": '("entity"<|>MIRELA VOSS<|>PERSON<|>Mirela Voss keeps the harbour)##'
    '("entity"<|>KESTLEWICK<|>GEO<|>A harbour town)##'
    '("relationship"<|>MIRELA VOSS<|>KESTLEWICK<|>She keeps its harbour<|>8)##<|COMPLETE|>'
}
"""An answer to graphrag's extraction prompt in its format (the prompt spells out
`entity_description`)."""
REPORT_PROMPT = "Write a comprehensive report of a community"
"""In graphrag's community report prompt (community_report_graph.txt), and no other."""
SUMMARY_PROMPT = "generating a comprehensive summary of the data provided below"
"""In graphrag's description summary prompt (summarize_descriptions.txt)."""
EXTRACTION_PROMPT = "Format each entity as"
"""In graphrag's graph extraction prompt (extract_graph.txt), the extraction check's included."""
NOT_JSON = "Here is the report you asked for: the community is about a harbour town and its people."
"""The `not_json` mode's answer: prose where JSON was asked."""
ERRORS = {
    "401": (
        401,
        "invalid_api_key",
        "Incorrect API key provided: sk-fake. You can find your API key at the dashboard.",
    ),
    "429": (429, "rate_limit_exceeded", "Rate limit reached for requests. Please try again in 1s."),
    "500": (500, "server_error", "The server had an error while processing your request."),
}


@dataclass
class FakeProvider:
    """The provider's behaviour and the requests it received."""

    url: str = ""
    modes: dict[str, str] = field(default_factory=lambda: {"chat": "ok", "embeddings": "ok"})
    dimensions: int = 256
    answer: str = "ok"
    retry_after: str = "1"
    """The `Retry-After` header of a 429."""
    slow_when: str | None = None
    """A chat request whose messages contain this is answered `slow_seconds` late."""
    slow_seconds: float = 2.0
    chunk_seconds: float = 0.0
    """With a streamed answer: the pause before each word's chunk (a model writing)."""
    structured: dict[str, str] = field(default_factory=dict)
    """Answers to the requests that ask for JSON, by a word of the request's JSON (the first that
    matches): graphrag's global map step (`"points"` in its prompt), drift's primer
    (`intermediate_answer`) and steps."""
    requests: list[tuple[str, float]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    """The messages of each chat request, joined."""
    fail_after: dict[str, tuple[int, str]] = field(default_factory=dict)
    """kind -> (n, mode): after n requests of that kind, answer in that mode."""
    extracts_names: bool = False
    """Answer graphrag's extraction prompt with the text's own names (capitalised runs of two or
    more words), each linked to the next, instead of the one fixed answer: documents then make
    graphs of their own."""
    prompt_faults: list["PromptFault"] = field(default_factory=list)
    """Faults of the chat requests whose messages contain a text (`fail_prompts`): the first that
    applies wins."""
    stopped: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    """Notified on every request."""

    def count(self, kind: str) -> int:
        """How many requests of `kind` (`chat` or `embeddings`) arrived."""
        return sum(
            1
            for path, _ in self.requests
            if path.endswith(kind if kind == "embeddings" else "completions")
        )

    def count_prompts(self, text: str) -> int:
        """How many chat requests arrived whose messages contain `text` (REPORT_PROMPT: report
        requests)."""
        return sum(1 for prompt in self.prompts if text in prompt)

    def fail_prompts(self, text: str, mode: str, times: int | None = None) -> "PromptFault":
        """Answer the chat requests whose messages contain `text` in `mode` (`500`, `truncated`,
        `not_json`...), the first `times` of them (None: all of them); the others as `modes["chat"]`
        says."""
        fault = PromptFault(text, mode, times)
        self.prompt_faults.append(fault)
        return fault

    def chat_mode(self, prompt: str) -> str:
        """The mode a chat request with these messages is answered in (a matching prompt fault is
        used up by one)."""
        with self.arrived:
            for fault in self.prompt_faults:
                if fault.text in prompt and (fault.times is None or fault.faulted < fault.times):
                    fault.faulted += 1
                    return fault.mode
        return self.modes["chat"]

    def wait_for(self, kind: str, count: int, timeout: float = 30) -> bool:
        """Block until `count` requests of `kind` have arrived (False after `timeout` seconds)."""
        with self.arrived:
            return self.arrived.wait_for(lambda: self.count(kind) >= count, timeout)


@dataclass
class PromptFault:
    """Chat requests containing `text` are answered in `mode`, the first `times` of them (None:
    all)."""

    text: str
    mode: str
    times: int | None = None
    faulted: int = 0
    """How many requests it answered so far."""


def _handler(provider: FakeProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            """Quiet."""

        def handle_one_request(self) -> None:
            """A client that stopped waiting (a timeout) closed the connection: nothing to
            answer."""
            try:
                super().handle_one_request()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            with provider.arrived:
                provider.requests.append((self.path, time.monotonic()))
                provider.arrived.notify_all()
            kind = "embeddings" if self.path.endswith("embeddings") else "chat"
            prompt = "\n".join(str(message.get("content")) for message in body.get("messages", []))
            if kind == "chat":
                with provider.arrived:
                    provider.prompts.append(prompt)
                if provider.slow_when is not None and provider.slow_when in prompt:
                    time.sleep(provider.slow_seconds)
            if kind in provider.fail_after and provider.count(kind) > provider.fail_after[kind][0]:
                provider.modes[kind] = provider.fail_after[kind][1]
            mode = provider.chat_mode(prompt) if kind == "chat" else provider.modes[kind]
            if mode == "hang":
                provider.stopped.wait(600)
                return
            if mode == "close":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if mode in ERRORS:
                status, code, message = ERRORS[mode]
                headers = {"Retry-After": provider.retry_after} if status == 429 else {}
                self._send(
                    status, {"error": {"message": message, "type": code, "code": code}}, headers
                )
            elif mode == "truncated":
                self._send(200, self._completion(body, self._answer(body)), cut=True)
            elif kind == "embeddings":
                inputs = body.get("input", [])
                inputs = [inputs] if isinstance(inputs, str) else inputs
                data = [
                    {"object": "embedding", "index": i, "embedding": [0.1] * provider.dimensions}
                    for i in range(len(inputs))
                ]
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model", "m"),
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    },
                )
            elif body.get("stream"):
                answer = NOT_JSON if mode == "not_json" else self._answer(body)
                self._stream(answer, (body.get("stream_options") or {}).get("include_usage", False))
            else:
                self._send(
                    200,
                    self._completion(body, NOT_JSON if mode == "not_json" else self._answer(body)),
                )

        def _completion(self, body: dict, content: str) -> dict:
            return {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "m"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": self._usage(content),
            }

        def _answer(self, body: dict) -> str:
            request = json.dumps(body)
            if provider.extracts_names and "entity_description" in request:
                return _names_extracted(
                    "\n".join(str(message.get("content")) for message in body["messages"])
                )
            return next(
                (text for word, text in provider.structured.items() if word in request),
                provider.answer,
            )

        def _usage(self, content: str) -> dict[str, int]:
            words = len(content.split())
            return {"prompt_tokens": 1, "completion_tokens": words, "total_tokens": words + 1}

        def _send(
            self,
            status: int,
            payload: dict,
            headers: dict[str, str] | None = None,
            cut: bool = False,
        ) -> None:
            """`payload` as JSON; with `cut`, only its first half (a body broken off)."""
            data = json.dumps(payload).encode()
            data = data[: len(data) // 2] if cut else data
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, answer: str, include_usage: bool) -> None:
            """The answer as server-sent events, a chunk a word, written as they are made (no length
            ahead)."""

            def event(choices: list[dict], **extra: object) -> bytes:
                chunk = {
                    "id": "c1",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "m",
                    "choices": choices,
                }
                return f"data: {json.dumps({**chunk, **extra})}\n\n".encode()

            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            words = answer.split(" ")
            for number, word in enumerate(words):
                time.sleep(provider.chunk_seconds)
                delta = {"content": word if number == len(words) - 1 else word + " "}
                self.wfile.write(
                    event(
                        [
                            {
                                "index": 0,
                                "delta": {"role": "assistant", **delta} if number == 0 else delta,
                                "finish_reason": None,
                            }
                        ]
                    )
                )
                self.wfile.flush()
            self.wfile.write(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
            if include_usage:
                self.wfile.write(event([], usage=self._usage(answer)))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


NAME = re.compile(r"\b[A-Z][a-z]+(?: (?:of |the )?[A-Z][a-z]+)+\b")


def _names_extracted(prompt: str) -> str:
    """graphrag's extraction format for the names of the prompt's input text, each related to the
    next."""
    text = prompt.rsplit("Text:", 1)[-1].split("######", 1)[0]
    names = list(dict.fromkeys(match.upper() for match in NAME.findall(text)))[:8]
    opening = " ".join(text.split()[:12]).replace("<|>", " ")
    records = [
        f'("entity"<|>{name}<|>PERSON<|>{name} is named in the text that begins: {opening})'
        for name in names
    ]
    records += [
        f'("relationship"<|>{first}<|>{second}<|>{first} is named with {second}<|>5)'
        for first, second in pairwise(names)
    ]
    return "##".join(records) + "<|COMPLETE|>"


@contextmanager
def fake_provider(
    chat: str = "ok",
    embeddings: str = "ok",
    dimensions: int = 256,
    answer: str = "ok",
    chunk_seconds: float = 0.0,
    structured: dict[str, str] | None = None,
    retry_after: str = "1",
    extracts: bool = True,
    extracts_names: bool = False,
) -> Iterator[FakeProvider]:
    """A FakeProvider serving on a free loopback port for the duration of the block."""
    provider = FakeProvider(
        modes={"chat": chat, "embeddings": embeddings},
        dimensions=dimensions,
        answer=answer,
        chunk_seconds=chunk_seconds,
        retry_after=retry_after,
        extracts_names=extracts_names,
        structured={**(EXTRACTION if extracts else {}), **(structured or {})},
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    server.daemon_threads = True
    provider.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        provider.stopped.set()
        server.shutdown()
        server.server_close()
