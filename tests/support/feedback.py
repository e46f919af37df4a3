"""Active content a notebook may write for its feedback page (a script, an event handler on
an image and on an SVG); shared by tests/unit/test_feedback_safety.py and
tests/grading/test_feedback_in_browser.py."""

ATTACK_HTML = (
    "<script>window.pwned = 'script'</script>"
    "<img src='data:,x' onerror=\"window.pwned = 'onerror'\">"
    "<svg onload=\"window.pwned = 'svg'\"></svg>"
)
