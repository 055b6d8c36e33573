"""What a reader types, inside a sentence: command-line flags (--overlap-grad-reduce), shell lines
(export HCCL_BUFFSIZE=256), identifiers (overlap_comm, HCCL_BUFFSIZE), issue references
(deepspeedai/DeepSpeed#823) and the values true/false. They stay as typed in every language, so a
page shows them as code (<code>) and a translation never has to spell them differently."""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

_TYPED = re.compile(
    r"(export [A-Z][A-Z0-9_]*=\S+?(?=[\s)（）,，;；]|$)"  # a shell line
    r"|--[a-z][a-z0-9-]+"  # a flag
    r"|\b[A-Za-z][A-Za-z0-9]*/[A-Za-z][A-Za-z0-9-]*#\d+(?:, #\d+)*"  # an issue reference
    r"|\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b"  # an identifier with underscores
    r"|(?<![A-Za-z])(?:true|false)(?![A-Za-z]))"
)


def code_spans(text: str) -> SafeString:
    """`text` escaped, with each typed thing in a <code> element."""
    out, last = [], 0
    for m in _TYPED.finditer(str(text)):
        out += [str(escape(text[last : m.start()])), f"<code>{escape(m.group(0))}</code>"]
        last = m.end()
    out.append(str(escape(text[last:])))
    return mark_safe("".join(out))  # every part escaped above
