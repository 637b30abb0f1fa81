"""mpsbench_core.text.printable: what the sweep and the analysis print of names from files and users."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "core"))
from mpsbench_core.text import printable  # noqa: E402


class Printable(unittest.TestCase):
    def test_printable_text_is_unchanged(self):
        for text in ("matmul fp32", "café", "名前", "a b", ""):
            self.assertEqual(printable(text), text)

    def test_controls_and_format_characters_are_escaped(self):
        self.assertEqual(printable("two\nlines\r\tx"), "two\\nlines\\r\\tx")
        self.assertEqual(printable("red\x1b[31m\x07"), "red\\x1b[31m\\x07")
        self.assertEqual(printable("bidi\u202eevil\u2028"), "bidi\\u202eevil\\u2028")
        self.assertEqual(printable("\udcff"), "\\udcff")  # undecodable byte (surrogateescape)
        self.assertEqual(printable("\U000e0001"), "\\U000e0001")
        self.assertEqual(printable(42), "42")

    def test_the_result_is_one_printable_line(self):
        for code in range(0x110000):
            ch = chr(code)
            if ch == " ":
                continue
            out = printable(ch)
            self.assertTrue(out.isprintable(), hex(code))


if __name__ == "__main__":
    unittest.main()
