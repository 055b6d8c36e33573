"""The OWASP CSV-injection rule, on cells written by hand."""

from reports.cells import neutralize, neutralize_row


def test_formula_triggers_get_a_quote():
    assert neutralize('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert neutralize("+1") == "'+1"
    assert neutralize("-2+3") == "'-2+3"
    assert neutralize("@SUM(A1)") == "'@SUM(A1)"
    assert neutralize("\tcmd") == "'\tcmd"


def test_plain_text_and_numbers_are_unchanged():
    assert neutralize("llama-3.1-70b") == "llama-3.1-70b"
    assert neutralize(-5.0) == -5.0
    assert neutralize(None) is None
    assert neutralize_row(["a", "=b", 3]) == ["a", "'=b", 3]
