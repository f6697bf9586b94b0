"""web_fetch: extraction time for a 2 MB HTML page, and fetch overhead beside a bare httpx GET.

* **Extraction.** A generated 2 MB documentation-like page (navigation, sidebar and footer
  around many sections of paragraphs, lists, code blocks and tables) through
  ``html_to_markdown`` (trafilatura, markdown output): the first call (imports included) and the
  median of the next ones.
* **Fetch overhead.** A loopback stdlib HTTP server serves a 100 KB text body. Timed in
  alternation: a bare ``httpx.AsyncClient(trust_env=False).get`` with a new client per request
  (which builds a TLS context each time), the same GET on one client kept open (the floor, and
  the baseline of the overheads printed), ``fetch()`` (a client per call sharing one TLS
  context, the guard's resolution, the pinned connection, redirects by hand, the capped
  streaming read) and the whole ``web_fetch`` tool (plus rendering and the result).

Run: ``python -m bench.web_fetch [--runs N]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BODY = b"".join(
    b"line %06d of a plain text body for the overhead benchmark\n" % n for n in range(1700)
)

SECTION = """
<section id="s{n}">
  <h2>Section {n}: configuring part {n}</h2>
  <p>Part {n} of the system reads its settings at start-up. This paragraph explains the keys,
  the defaults and the checks, with enough words to look like real documentation text that a
  reader would want to keep: the options, their interplay and the errors they produce.</p>
  <ul><li>First point about part {n}</li><li>Second point, with <a href="/ref/{n}">a link</a></li>
  <li>Third point about the defaults of part {n}</li></ul>
  <pre><code>tool --part {n} --check
tool --part {n} --print-defaults</code></pre>
  <table><tr><th>Key</th><th>Default</th></tr><tr><td>speed{n}</td><td>{n}</td></tr>
  <tr><td>retries{n}</td><td>3</td></tr></table>
</section>
"""

CHROME = """
<nav><ul>{links}</ul></nav>
<aside><h3>Related</h3><ul>{links}</ul></aside>
"""


def big_page(target: int = 2 * 1024 * 1024) -> str:
    links = "".join(f'<li><a href="/nav/{n}">Nav {n}</a></li>' for n in range(40))
    head = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Big docs</title>"
        "<script>var x = 1;</script></head><body><header>Brand</header>"
        + CHROME.format(links=links)
        + "<main><article><h1>The big documentation page</h1>"
    )
    tail = "</article></main><footer>Copyright footer text</footer></body></html>"
    parts = [head]
    size = len(head) + len(tail)
    n = 0
    while size < target:
        section = SECTION.format(n=n)
        parts.append(section)
        size += len(section)
        n += 1
    parts.append(tail)
    return "".join(parts)


def bench_extraction(runs: int) -> None:
    page = big_page()
    started = time.perf_counter()
    from knightcode_builtins.web_tools.extract import html_to_markdown

    first_text = html_to_markdown(page, "https://docs.example.com/big")
    first = time.perf_counter() - started
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        html_to_markdown(page, "https://docs.example.com/big")
        samples.append(time.perf_counter() - started)
    print(
        f"extraction of a {len(page) / 1e6:.2f} MB HTML page -> {len(first_text) / 1e6:.2f} MB "
        f"markdown: first call (imports included) {first * 1000:.0f} ms, "
        f"median of {runs} {statistics.median(samples) * 1000:.0f} ms"
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)


async def bench_overhead(runs: int) -> None:
    import httpx

    from knightcode import ToolContext
    from knightcode_builtins.web_tools.fetch import FetchSettings, fetch, web_fetch_tool
    from knightcode_builtins.web_tools.scratchpad import ScratchpadSettings

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page"
    with tempfile.TemporaryDirectory() as scratch:
        settings = FetchSettings(
            allow_private=True,
            scratchpad=ScratchpadSettings(inline_chars=10**9, directory=scratch),
        )
        tool = web_fetch_tool(settings)
        ctx = ToolContext.local(Path(scratch))

        async def bare() -> None:
            async with httpx.AsyncClient(trust_env=False) as client:
                response = await client.get(url)
                assert len(response.content) == len(BODY)

        reused = httpx.AsyncClient(trust_env=False)

        async def bare_reused() -> None:
            response = await reused.get(url)
            assert len(response.content) == len(BODY)

        async def fetched() -> None:
            result = await fetch(url, settings)
            assert len(result.body) == len(BODY)

        async def whole_tool() -> None:
            await tool.execute("bench", {"url": url}, ctx, None)

        cases: dict[str, Callable[[], Awaitable[None]]] = {
            "bare httpx GET": bare,
            "bare, one client": bare_reused,
            "fetch()": fetched,
            "web_fetch tool": whole_tool,
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for index in range(runs + 3):
            for name, case in cases.items():
                started = time.perf_counter()
                await case()
                if index >= 3:
                    samples[name].append((time.perf_counter() - started) * 1000)
        await reused.aclose()
    server.shutdown()
    server.server_close()
    base = statistics.median(samples["bare, one client"])
    print(f"loopback GET of a {len(BODY) / 1024:.0f} KB text body, median of {runs}:")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:16s} {median:7.2f} ms  ({median - base:+.2f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    bench_extraction(max(3, args.runs // 4))
    asyncio.run(bench_overhead(args.runs))


if __name__ == "__main__":
    main()
