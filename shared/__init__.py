"""What the three stages share: everything that is not the lesson of a stage.

URL normalization and policy (``urls``), the link parser (``links``), HTTP
requests and response parsing (``http``), statistics (``stats``), the common
crawler bookkeeping (``crawling``), the report (``report``), the local test
site (``site``, ``server``) and the command line (``cli``).
"""

from shared.report import report, write_jsonl
from shared.stats import FetchStatistic, ResponseTooLarge

__all__ = ["FetchStatistic", "ResponseTooLarge", "report", "write_jsonl"]
