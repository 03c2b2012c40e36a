"""What a crawl leaves behind.

Each URL's outcome as a ``FetchStatistic`` (``stats``), the report and the
JSON Lines records (``report``), the trace of what each worker did and
when (``trace``) and the timeline drawn from it (``timeline``), and the
pages stored on disk (``save``).  It stands on ``shared.web`` only.
"""
