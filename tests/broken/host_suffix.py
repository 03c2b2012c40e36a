"""Follows off-site links: stage 1 taking any host whose name ends with a root's host."""

import urllib.parse

import stage1_callbacks
from tests.acceptance import AcceptanceTests
from tests.broken import broken_stage

LEVEL = 2
HINT = (
    "test_url_allowed_strict: rule docs/contract.md#urls; read docs/callbacks.md#crawling-the-site"
)


def host_of(url: str) -> str:
    try:
        return urllib.parse.urlsplit(url).hostname or ""
    except ValueError:
        return ""


class HostSuffixCrawler(stage1_callbacks.Crawler):
    def url_allowed(self, url: str) -> bool:
        # The bug: notexample.com and foo.example.com end with example.com.
        roots = {host_of(root) for root in self.roots} - {""}
        host = host_of(url)
        web = url.lower().startswith(("http://", "https://"))
        return web and bool(host) and any(host.endswith(root) for root in roots)


class TestAcceptance(AcceptanceTests):
    stage = broken_stage(stage1_callbacks, HostSuffixCrawler)
    shape = "callbacks"
