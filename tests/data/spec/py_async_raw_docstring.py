async def fetch(url: str) -> bytes:
    r"""Fetch url and return the body; \d+ retries.‸"""
