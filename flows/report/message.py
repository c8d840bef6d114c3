"""The report as an email message (building only; sending is flows/delivery/deliver.py's).

multipart/alternative
├── text/plain             report.txt
└── multipart/related
    ├── text/html          email.html (CSS inlined, charts as cid:)
    └── image/png ...      charts/<name>.png, inline, Content-ID <name.png@reliability-report>

Only the charts email.html refers to are attached, in the order it shows them; a reference without
its PNG is an error, so the html and the images always match.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from email.message import EmailMessage
from pathlib import Path

from flows.report.render import CHARTS_DIR, CID_DOMAIN, NOTICE_PLACEHOLDER, content_id, notice_html

CID_REF = re.compile(r"""src=["']cid:([A-Za-z0-9_.-]+)\.png@""" + re.escape(CID_DOMAIN) + """["']""")


def chart_names(email_html: str) -> list[str]:
    """The charts the html shows, in order, each once."""
    return list(dict.fromkeys(CID_REF.findall(email_html)))


def build_message(
    report_dir: Path,
    *,
    sender: str,
    recipients: Sequence[str],
    subject: str,
    notice: str | None = None,
) -> EmailMessage:
    """The report in `report_dir` as a message; `notice` (e.g. "Correction: this replaces the report
    sent on ...") is shown, escaped, at the top of both the html and the text."""
    report_dir = Path(report_dir)
    html = (report_dir / "email.html").read_text()
    text = (report_dir / "report.txt").read_text()
    if notice:
        if NOTICE_PLACEHOLDER not in html:
            raise ValueError(f"{report_dir / 'email.html'}: no {NOTICE_PLACEHOLDER} placeholder for the notice")
        html = html.replace(NOTICE_PLACEHOLDER, notice_html(notice), 1)
        text = f"{notice}\n{'=' * min(len(notice), 72)}\n\n{text}"
    images = []
    for name in chart_names(html):
        path = report_dir / CHARTS_DIR / f"{name}.png"
        if not path.is_file():
            raise FileNotFoundError(f"{report_dir / 'email.html'} shows chart {name!r} but {path} is missing")
        images.append((name, path.read_bytes()))

    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    html_part = msg.get_payload()[1]
    for name, png in images:
        # inline (with the filename only for saving): shown in place, not listed as an attachment
        html_part.add_related(png, "image", "png", cid=content_id(name), disposition="inline", filename=f"{name}.png")
    return msg
