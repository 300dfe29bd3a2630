import unittest

from slug import slugify


class SlugTest(unittest.TestCase):
    def test_ascii_only(self):
        # Our URLs must be plain ASCII.
        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")

    def test_keeps_accents(self):
        # The French site wants its words as written.
        self.assertEqual(slugify("Crème brûlée"), "crème-brûlée")


if __name__ == "__main__":
    unittest.main()
