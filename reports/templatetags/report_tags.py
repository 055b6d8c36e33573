from django import template

from .. import formatting

register = template.Library()


@register.filter
def fmt(value, kind="auto"):
    """{{ value|fmt:"bytes" }}: locale-aware formatting by kind (see reports.formatting.KINDS)."""
    return formatting.by_kind(value, kind)


@register.filter
def for_key(value, key):
    """{{ value|for_key:"step_time_s" }}: format by the unit suffix of the field's name."""
    return formatting.for_key(str(key), value)


@register.filter
def signed_percent(value):
    if value is None:
        return formatting.DASH
    text = formatting.percent(value)
    return f"+{text}" if value > 0 else text


@register.filter
def item_text(item):
    """Advice / starting-configuration entries may be strings or dicts; show their sentence."""
    if isinstance(item, dict):
        for key in ("message", "text", "advice", "why"):
            if item.get(key):
                return item[key]
        return ", ".join(f"{k}: {v}" for k, v in item.items())
    return str(item)


@register.simple_tag
def term(name, label=None):
    """<abbr> with the glossary's definition as its title: {% term "MFU" %}."""
    from django.utils.html import format_html

    from ..glossary import TERMS

    text = TERMS.get(name)
    if text is None:
        return label or name
    return format_html('<abbr class="term" title="{}" tabindex="0">{}</abbr>', str(text), label or name)


@register.filter
def gloss(text):
    """{{ label|gloss }}: the label with the glossary's tooltips on its jargon (escaped HTML)."""
    from django.utils.safestring import mark_safe

    from ..glossary import gloss as wrap

    return mark_safe(wrap(str(text)))


@register.filter
def typed(text):
    """{{ reason|typed }}: flags, shell lines and identifiers inside a sentence as code."""
    from ..typed import code_spans

    return code_spans(str(text))


@register.filter
def plane(value):
    """{{ sc.unit.cooling|plane }}: a scale-up plane's descriptive value in the reader's language."""
    from ..labels import plane_value

    return plane_value(value)
