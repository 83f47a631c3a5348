"""GPU verification: run each record's claims on real hardware and keep the results.

Everything in this package uses the standard library only (plus `errkb.templates`), so the
runner and its workers start on a GPU machine whose Python has torch and the attention
libraries but not errkb's own dependencies: `PYTHONPATH=. python3 -m errkb.verify run ...`.

Case code lives next to the records, in `verification/cases/<area>/<record-id>.py`
(see `errkb.verify.case` and docs/verification.md); results in `data/verification/`.
"""

from __future__ import annotations

from errkb.verify.results import summary

__all__ = ["summary"]
