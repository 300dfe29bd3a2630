"""Helpers that more than one test module uses, in one place: a test module never imports from another test module
(or from a conftest), only from here and from the ``*_support`` modules beside the tests."""
