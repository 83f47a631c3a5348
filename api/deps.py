"""Shared state for route functions: the knowledge base loaded once at start-up."""

from __future__ import annotations

from fastapi import Request

from errkb.kb import KnowledgeBase


async def get_kb(request: Request) -> KnowledgeBase:
    # async: FastAPI runs a plain `def` dependency in a worker thread, a hop on every request.
    return request.app.state.kb
