"""Plausible wrong solutions to the exercises, one mistake each.

``tests/test_exercises.py`` runs each exercise's test on them, with
``--exercise``, and expects it to fail with the message that names the
mistake: proof that the test catches more than the starting file.
"""
