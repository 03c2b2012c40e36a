"""The words of the benchmark's summary, in English and in Chinese.

``report.summary`` writes ``summary.md`` for the English pages and
``summary.zh.md`` for the Chinese ones from the same figures.  Its fixed
text (headings, table headers, labels, and the paragraphs as
``str.format`` templates) is written in English in the report, and each
piece goes through ``say``, which looks up the Chinese here.  A piece with
no Chinese is an error, not an English line on a Chinese page.  The charts
and ``targets.md`` (for the maintainers) stay in English.
"""

from __future__ import annotations

LANGUAGES = ("en", "zh")

THROUGHPUT = (
    "A {pages:,}-page site ({urls:,} URLs, redirects included) with no latency, max_tasks "
    "{max_tasks}. Pages/s is the site's {urls:,} URLs divided by the wall time of the whole "
    "crawl; requests are counted by the server (`wget -r` asks for some pages twice). CPU per "
    "request is measured from outside the processes."
)
CONCURRENCY = (
    "A {pages:,}-page site ({urls:,} URLs), {latency_ms:.0f} ms latency per response. The "
    "ideal is a simulated work-conserving crawler on the site's own link graph, with the same "
    "number of slots, every fetch waiting exactly the latency, and then each page costing the "
    "CPU time the real crawler measured per URL in that run, on one core, one page at a time: "
    "the median over five orders of queuing each page's links. So the ratio counts time lost "
    "waiting, not the speed of the machine. The second column is the ideal without CPU. No "
    "crawler can beat the graph's depth times the latency, {lower_bound:.1f} s. Each cell: "
    "median wall time, its ratio to that crawler's own ideal, and the crawler's CPU time."
)
MEMORY = (
    "A slow local server holds every request until all of them are in flight; the crawler's "
    "RSS is read then. kB per fetch = (RSS held − RSS before the crawl) / fetches held; it "
    "includes the crawl's bookkeeping of each URL (a few hundred bytes). The thread crawler "
    "runs one thread per fetch, with the default stack size."
)
MEMORY_WARM = (
    "A slow local server holds every request until all of them are in flight; the crawler's "
    "RSS is read then. kB per fetch = (RSS held − RSS before the crawl) / fetches held; the "
    "RSS before is read after a warm-up crawl of a {warm_up_pages}-page site, so it leaves "
    "out what a process's first crawl sets up once, and kB per fetch includes the crawl's "
    "bookkeeping of each URL (a few hundred bytes). The thread crawler runs one thread per "
    "fetch, with the default stack size."
)
CEILING = (
    "Measured with {tool}, GET /pages/1/, on the server the crawlers ran against. It answers "
    "a page from memory after its first request (a response cache), so that the server is "
    "not what limits the crawlers. Served without the cache, as in the server chapter, the "
    "same site answers far fewer requests a second."
)
SERVERS = (
    "Both serve the test site from a process of their own, without a response cache. `ab` "
    "asks for one content page, {concurrency} at a time: {requests:,} requests with a new "
    "connection each, then {keep_alive_requests:,} with keep-alive (`-k`); the servers take "
    "turns, median of the runs. `ab` itself needs most of a core, and the machine is shared, "
    "so the other processes' CPU is shown beside. Idle connections: each client connects, "
    "asks for the page once and goes quiet; kB per idle connection = (server RSS with all of "
    "them open − RSS before) / connections; held = how many then answered a second request "
    "on the same connection."
)
SERVERS_KEEP_ALIVE = (
    "Both serve the test site from a process of their own, and so does step 6 of the server "
    "chapter (the same site with llhttp as the parser, without the finished server's timer "
    "and limits). None has the response cache of the throughput table's server, which answers"
    " a page from memory after its first request: that is why its ceiling is higher. Each is "
    "loaded with one content page, {concurrency} connections at a time; the servers take "
    "turns, median of the runs. `ab` sends {requests:,} requests with a new connection each, "
    "then `ab -k` {keep_alive_requests:,}: its keep-alive is HTTP/1.0's (`Connection: keep-"
    "alive`), which a server may refuse by closing the connection after each answer, so ab's "
    "own count of the requests that went on a kept connection is shown beside. `wrk` speaks "
    "HTTP/1.1, where a connection stays open unless a side says otherwise, and runs "
    "{wrk_seconds} s; the ratio column divides a row's wrk figure by aiohttp.web's. `ab` and "
    "`wrk` need most of a core themselves, and the machine is shared, so the other processes'"
    " CPU is shown beside. Idle connections: each client connects, asks for the page once and"
    " goes quiet; kB per idle connection = (server RSS with all of them open − RSS before) / "
    "connections; held = how many then answered a second request on the same connection."
)
PARSERS = (
    "Cost of finding the links of one page of the test site ({pages} pages, "
    "{bytes_per_page:,.0f} bytes on average), best of five."
)
TRACING = (
    "A {pages:,}-page site with no latency, max_tasks {max_tasks}, crawled with `trace=` and "
    "without, turn about. CPU per page is the crawl's own CPU time (writing the trace "
    "included) over the URLs it recorded. Without a trace the crawlers still call a recorder "
    "that does nothing; that cost is counted instead of timed: the recorder calls per page "
    "of the traced crawl times the cost of one call ({noop_ns:.0f} ns)."
)
# The ideal that also pays the server's CPU (runs that measured it).
CONCURRENCY_SERVER = (
    "A {pages:,}-page site ({urls:,} URLs), {latency_ms:.0f} ms latency per response. The "
    "ideal is a simulated work-conserving crawler on the site's own link graph, with the same "
    "number of slots, every fetch waiting exactly the latency, and then each page costing the "
    "CPU time the real crawler measured per URL in that run, on one core, one page at a time. "
    "The server has a core of its own, and each request costs it, in turn, the server's CPU "
    "time per request measured in that run: with hundreds of slots the server can be what "
    "limits the crawl. The ideal is the median over five orders of queuing each page's links. "
    "So the ratio counts time lost waiting, not the speed of the machine. The second column "
    "is the ideal without CPU. No crawler can beat the graph's depth times the latency, "
    "{lower_bound:.1f} s. Each cell: median wall time, its ratio to that crawler's own ideal, "
    "and the crawler's CPU time."
)
INSTRUCTIONS = (
    "Instructions counted by valgrind's callgrind in the crawler's process: two crawls of the "
    "cached site, {small} and {big} pages, max_tasks {max_tasks}; their difference over the "
    "difference of their requests is one request's, start-up left out. The same code counts "
    "the same within half a percent, however busy the machine, where times move by a fifth: "
    "the CPU targets are set on these counts. Each stage is held against its floor, a bare "
    "loop that crawls the same site with the stages' HTTP code and link parser and nothing "
    "else: a selectors loop for stages 1 and 2, one aiohttp session for stage 3. The kernel's "
    "instructions are not counted, and the thread crawler spends much of its time there."
)
SCALE = (
    "Each stage crawls the simulated site (`crawl --simulate --pages N --stream`, each record "
    "streamed to a JSON Lines file) in a fresh process, once a size: no network and no "
    "waiting, so the CPU time is the crawler's own, with the simulated site's and the oracle "
    "check's. A warm-up crawl of {warm_up:,} pages comes first, and the memory per URL is how far "
    "the process's peak RSS rose past its RSS after the warm-up, over the URLs recorded. CPU "
    "per URL is the measured crawl's CPU time over its URLs; the last column compares it "
    "with the smallest site's."
)
SCALE_BREAKDOWN = (
    "What those bytes are: a crawl of {pages:,} pages under tracemalloc, at the moment Python "
    "held the most for it, the bytes allocated per URL recorded, by what allocated them. No "
    "record is kept, so none is here. What RSS counts beyond this is the allocator's: blocks "
    "rounded up to 16 bytes, and memory it keeps for later."
)
# The machine's keys that the summary shows (see report.MACHINE_LOAD for the others).
MACHINE = ("date", "commit", "cpu", "memory", "system", "python", "packages", "tools")

ZH = {
    # The cost of a trace (shared/bench/tracing.py).
    TRACING: (
        "一个 {pages:,} 页、没有延迟的站点，max_tasks 为 {max_tasks}，带 `trace=` 和不带各爬一次，"
        "轮流进行。每页 CPU 是爬取本身的 CPU 时间（包括写记录文件）除以它记录的 URL 数。"
        "不带记录时，爬虫仍然会调用一个什么也不做的记录器；这部分开销是算出来的，不是测出来的："
        "带记录的那次爬取每页调用记录器的次数，乘以一次调用的开销（{noop_ns:.0f} ns）。"
    ),
    "The cost of a trace": "记录的代价",
    "CPU µs per page, no trace": "每页 CPU µs（不记录）",
    "with a trace": "带记录",
    "more with a trace": "带记录时多出",
    "recorder calls per page": "每页调用记录器次数",
    "more without a trace (counted)": "不记录时多出（按调用次数算）",
    # The crawlers and servers.
    "stage 1 (callbacks)": "第一阶段（回调）",
    "stage 2 (generators)": "第二阶段（生成器）",
    "stage 3 (asyncio)": "第三阶段（asyncio）",
    "stage 3 on uvloop": "第三阶段，跑在 uvloop 上",
    "threads (blocking)": "线程（阻塞式）",
    "Scrapy": "Scrapy",
    "wget -r": "wget -r",
    "aiohttp.web": "aiohttp.web",
    "stage 2's server": "第二阶段的服务器",
    # The first line.
    "median of {runs} runs": "{runs} 次运行的中位数",
    "a quick run, one run each and smaller scenarios: indicative only": (
        "快速运行，每项只跑一次，场景也更小：仅供参考"
    ),
    "Measured on {date} ({runs}), commit `{commit}`.": "测于 {date}（{runs}），提交 `{commit}`。",
    # Headings and charts.
    "Throughput": "吞吐量",
    "Concurrency against the ideal": "并发与理想值",
    "Memory per in-flight fetch, and C10K": "每个在途抓取的内存，以及 C10K",
    "Stage 2's HTTP server beside aiohttp.web": "第二阶段的 HTTP 服务器与 aiohttp.web",
    "The link parser": "链接解析器",
    "Machine": "机器",
    "Pages per second, by crawler": "各爬虫每秒抓取的页面数",
    "Wall time over the ideal, by max_tasks": "不同 max_tasks 下挂钟时间与理想值之比",
    "Memory per in-flight fetch": "每个在途抓取占用的内存",
    # Inside the charts.
    "server ceiling (new connections, cached answers)": (
        "服务器上限（每个请求新建连接，应答有缓存）"
    ),
    "pages per second ({urls:,} URLs, max_tasks {max_tasks})": (
        "每秒页面数（{urls:,} 个 URL，max_tasks 为 {max_tasks}）"
    ),
    "target: 1.10× ideal": "目标：理想值的 1.10×",
    "max_tasks ({urls:,} URLs, {latency_ms:.0f} ms latency)": (
        "max_tasks（{urls:,} 个 URL，延迟 {latency_ms:.0f} ms）"
    ),
    "wall time / ideal": "挂钟时间 / 理想值",
    "kB of RSS per in-flight fetch": "每个在途抓取占用的 RSS（kB）",
    "{n:,} in flight": "{n:,} 个在途",
    # Paragraphs.
    THROUGHPUT: (
        "站点共 {pages:,} 个页面（连同重定向共 {urls:,} 个 URL），没有延迟，max_tasks 为 "
        "{max_tasks}。页面/秒是站点的 {urls:,} 个 URL 除以整次爬取的挂钟时间；请求数由服务器"
        "统计（`wget -r` 有些页面会请求两次）。每个请求的 CPU 时间是在进程外部测得的。"
    ),
    CONCURRENCY: (
        "站点共 {pages:,} 个页面（{urls:,} 个 URL），每个应答延迟 {latency_ms:.0f} 毫秒。"
        "理想值来自模拟：在站点自己的链接图上，让一个从不空着空位的爬虫去爬，空位数与真实爬虫"
        "相同，每次抓取恰好等一个延迟，之后每个页面再花掉真实爬虫在这次运行中测得的每个 URL "
        "的 CPU 时间，在一个核心上一次处理一个页面；页面链接的入队顺序取五种，结果取中位数。"
        "所以这个比值反映的是等待中损失的时间，与机器快慢无关。第二列是不计 CPU 的理想值。"
        "任何爬虫都快不过链接图的深度乘以延迟，即 {lower_bound:.1f} 秒。每个单元格依次是："
        "挂钟时间的中位数、它与该爬虫自身理想值之比，以及爬虫的 CPU 时间。"
    ),
    MEMORY: (
        "一个很慢的本地服务器把每个请求都压着不答，直到所有请求都在途，这时读取爬虫的 RSS。"
        "每次抓取 kB =（保持时的 RSS − 爬取前的 RSS）/ 同时保持的抓取数，其中包括爬取为每个 "
        "URL 所做的记录（几百字节）。线程爬虫每次抓取用一个线程，栈大小取默认值。"
    ),
    MEMORY_WARM: (
        "一个很慢的本地服务器把每个请求都压着不答，直到所有请求都在途，这时读取爬虫的 RSS。"
        "每次抓取 kB =（保持时的 RSS − 爬取前的 RSS）/ 同时保持的抓取数。爬取前的 RSS 是先预热"
        "爬一个 {warm_up_pages} 页的站点之后才读的，所以不含进程第一次爬取时一次性的准备；每次"
        "抓取 kB 里包括爬取为每个 URL 所做的记录（几百字节）。线程爬虫每次抓取用一个线程，栈"
        "大小取默认值。"
    ),
    SERVERS: (
        "两个服务器都在各自的进程里提供测试站点，不缓存响应。`ab` 反复请求同一个内容页面，"
        "每次 {concurrency} 个并发：先是 {requests:,} 个请求，每个都新建连接，然后是 "
        "{keep_alive_requests:,} 个保持连接的请求（`-k`）；两个服务器轮流测，取各次运行的"
        "中位数。`ab` 自己就要占去大半个核心，机器又是共用的，所以旁边列出了其他进程占用的 "
        "CPU。空闲连接：每个客户端连上后请求一次页面，然后就不再作声；每个空闲连接 kB =（所有"
        "连接都打开时服务器的 RSS − 之前的 RSS）/ 连接数；保持住的连接，是之后还能在同一连接上"
        "应答第二个请求的连接。"
    ),
    SERVERS_KEEP_ALIVE: (
        "两个服务器都在各自的进程里提供测试站点，不缓存响应。吞吐量一节的服务器则有响应缓存："
        "一个页面请求过一次，之后就从内存里应答，所以它的上限更高。服务器一章的第 6 步也不缓存"
        "（同一个站点，改用 llhttp 解析请求，但没有完整服务器的计时器和各项限制）。"
        "每个服务器都反复被请求同一个内容页面，同时 {concurrency} 个连接；"
        "几个服务器轮流测，取各次运行的中位数。`ab"
        "` 先发 {requests:,} 个请求，每个都新建连接；再用 `ab -k` 发 {keep_alive_requests:,} 个"
        "：它的保持连接是 HTTP/1.0 的那一套（`Connection: keep-alive`），服务器可以不答应，每次"
        "应答之后就关掉连接，所以旁边列出了 ab 自己统计的、真正走在保持住的连接上的请求数。`wrk"
        "` 说的是 HTTP/1.1，连接默认保持，除非某一方说要关；它跑 {wrk_seconds} 秒。倍数一栏是"
        "该行的 wrk 数字除以 aiohttp.web 的。`ab` 和 `wrk"
        "` 自己就要占去大半个核心，机器又是共用的，所以旁边列出了其他进程占用的 CPU。空闲连接："
        "每个客户端连上后请求一次页面，然后就不再作声；每个空闲连接 kB =（所有连接都打开时服务"
        "器的 RSS − 之前的 RSS）/ 连接数；保持住的连接，是之后还能在同一连接上应答第二个请求的"
        "连接。"
    ),
    PARSERS: (
        "在测试站点的一个页面上找出全部链接的开销（共 {pages} 个页面，平均每页 "
        "{bytes_per_page:,.0f} 字节），取五次中最好的一次。"
    ),
    CONCURRENCY_SERVER: (
        "站点共 {pages:,} 个页面（{urls:,} 个 URL），每个应答延迟 {latency_ms:.0f} 毫秒。"
        "理想值来自模拟：在站点自己的链接图上，让一个从不空着空位的爬虫去爬，空位数与真实爬虫"
        "相同，每次抓取恰好等一个延迟，之后每个页面再花掉真实爬虫在这次运行中测得的每个 URL "
        "的 CPU 时间，在一个核心上一次处理一个页面。服务器另有一个核心，每个请求依次花掉它在"
        "这次运行中测得的每个请求的 CPU 时间：空位上百时，拖住爬取的可能是服务器。页面链接的"
        "入队顺序取五种，结果取中位数。所以这个比值反映的是等待中损失的时间，与机器快慢无关。"
        "第二列是不计 CPU 的理想值。任何爬虫都快不过链接图的深度乘以延迟，即 "
        "{lower_bound:.1f} 秒。每个单元格依次是：挂钟时间的中位数、它与该爬虫自身理想值之比，"
        "以及爬虫的 CPU 时间。"
    ),
    INSTRUCTIONS: (
        "指令数由 valgrind 的 callgrind 在爬虫进程里计得：爬两次带缓存的站点，分别是 {small} "
        "页和 {big} 页，max_tasks 为 {max_tasks}；两次的指令数之差除以请求数之差，就是一个请求"
        "的指令数，启动的开销不算在内。同样的代码计得的数相差不到千分之五，机器再忙也一样；"
        "时间却会上下浮动五分之一。所以 CPU 的目标定在指令数上。每个阶段都和自己的下限比："
        "一个光秃秃的循环，用各阶段共用的 HTTP 代码和链接解析器爬同一个站点，别的什么也不做。"
        "第一、二阶段的下限是一个 selectors 循环，第三阶段的是一个 aiohttp 会话。内核里的指令"
        "不计，而线程爬虫有很多时间花在内核里。"
    ),
    SCALE: (
        "每个阶段在一个新进程里爬模拟站点（`crawl --simulate --pages N --stream`，每条记录都"
        "随写随存进一个 JSON Lines 文件），每种规模爬一次：没有网络，也没有等待，所以 CPU 时间"
        "就是爬虫自己的，外加模拟站点和核对预期结果的开销。先预热爬 {warm_up:,} 页；每个 URL 的内存"
        "是进程的 RSS 峰值比预热后的 RSS 高出的部分，除以记录的 URL 数。每个 URL 的 CPU 是正式"
        "那次爬取的 CPU 时间除以它的 URL 数；最后一列把它和最小站点的比。"
    ),
    SCALE_BREAKDOWN: (
        "这些字节是什么：在 tracemalloc 下爬 {pages:,} 页，取 Python 为它占用内存最多的那一刻，"
        "按分配者归类，算出每个记录的 URL 分到多少字节。记录一条也不留在内存里，所以这里没有"
        "记录。RSS 比这多出的部分归内存分配器：内存块向上取整到 16 字节，还有它留着备用的内存。"
    ),
    "Instructions per request": "每个请求的指令数",
    "error": "出错",
    "A million URLs": "一百万个 URL",
    "What the bytes of a URL are": "一个 URL 的字节都是什么",
    "CPU and memory per URL, by the size of the site": "不同规模站点上每个 URL 的 CPU 和内存",
    "instructions per request": "每个请求的指令数",
    "its floor": "它的下限",
    "× its floor": "为下限的几倍",
    "bare selectors loop (floor)": "光秃秃的 selectors 循环（下限）",
    "bare aiohttp loop (floor)": "光秃秃的 aiohttp 循环（下限）",
    "pages": "页面数",
    "URLs": "URL 数",
    "CPU µs per URL": "每个 URL 的 CPU（微秒）",
    "bytes per URL (peak RSS)": "每个 URL 的字节数（RSS 峰值）",
    "× the smallest site's CPU": "为最小站点 CPU 的几倍",
    "oracle": "与预期结果",
    "matched": "一致",
    "MISMATCH": "不一致",
    "part of the crawl": "爬取的组成部分",
    "URL strings, each held once by the seen set": "URL 字符串，每个只由已见集合存一份",
    "the seen set's table": "已见集合的哈希表",
    "queue entries: (url, max_redirect) pairs": "队列里的条目：(url, max_redirect) 二元组",
    "the queue's own list": "队列自己的列表",
    "the oracle's check, a byte per URL": "预期结果的核对，每个 URL 一个字节",
    "other": "其他",
    "traced in all": "合计（tracemalloc）",
    "RSS, for comparison": "RSS，作为对照",
    "pages (log scale)": "页面数（对数刻度）",
    "target: 300 bytes": "目标：300 字节",
    # Throughput table.
    "crawler": "爬虫",
    "pages/s": "页面/秒",
    "wall (s)": "挂钟时间（秒）",
    "requests": "请求数",
    "crawler CPU µs/request": "爬虫 CPU（微秒/请求）",
    "crawler instructions/request": "爬虫指令数/请求",
    "server CPU µs/request": "服务器 CPU（微秒/请求）",
    "same as oracle": "与预期结果一致",
    "errors": "出错次数",
    "yes": "是",
    "no": "否",
    CEILING: (
        "用 {tool} 测得，请求 GET /pages/1/，测的就是各爬虫所爬的那个服务器。它有响应缓存："
        "一个页面请求过一次，之后就从内存里应答，免得服务器拖住爬虫。不带缓存时（服务器一章"
        "就是这样测的），同一个站点每秒能应答的请求要少得多。"
    ),
    "server ceiling": "服务器上限",
    "requests/s": "请求/秒",
    "new connection per request": "每个请求新建连接",
    "keep-alive": "保持连接",
    # Concurrency table.
    "ideal, no CPU (s)": "理想值，不计 CPU（秒）",
    "{wall} s ({ratio} its ideal of {ideal} s), CPU {cpu} s{warning}": (
        "{wall} 秒（为其理想值 {ideal} 秒的 {ratio}），CPU {cpu} 秒{warning}"
    ),
    " ⚠ over max_tasks": " ⚠ 超过 max_tasks",
    # Memory table.
    "fetches held": "同时保持的抓取数",
    "RSS before (MB)": "爬取前 RSS（MB）",
    "RSS held (MB)": "保持时 RSS（MB）",
    "kB per fetch": "每次抓取 kB",
    "× a thread's": "为线程的几倍",
    "s to hold all": "全部保持所需秒数",
    "s to finish after release": "放行后收尾秒数",
    "complete": "完成",
    "{complete} of {runs}": "{complete} / {runs}",
    " ({failed} failed)": "（{failed} 次失败）",
    # Servers table.
    "server": "服务器",
    "requests/s, new connections": "请求/秒，新建连接",
    "requests/s, keep-alive": "请求/秒，保持连接",
    "other processes' CPU during ab (cores)": "ab 运行时其他进程的 CPU（核）",
    "kB per idle connection": "每个空闲连接 kB",
    "idle connections held": "保持住的空闲连接",
    "machine busy while held (cores)": "保持期间机器的繁忙程度（核）",
    "{held:,} of {connections:,}": "{held:,} / {connections:,}",
    "step 6 (llhttp)": "第 6 步（llhttp）",
    "requests/s, new connections (ab)": "请求/秒，新建连接（ab）",
    "requests/s, ab -k (HTTP/1.0 keep-alive)": "请求/秒，ab -k（HTTP/1.0 保持连接）",
    "ab -k requests on a kept connection": "ab -k 走在保持住的连接上的请求",
    "requests/s, wrk (HTTP/1.1 keep-alive)": "请求/秒，wrk（HTTP/1.1 保持连接）",
    "wrk ÷ aiohttp.web's": "wrk 为 aiohttp.web 的几倍",
    "other processes' CPU during ab and wrk (cores)": "ab 和 wrk 运行时其他进程的 CPU（核）",
    # Parser table.
    "parser": "解析器",
    "reading the page (µs)": "读取页面（微秒）",
    "whole extract_links (µs)": "整个 extract_links（微秒）",
    "link path: parse, resolve, normalize, filter (µs)": (
        "链接全程：解析、补全为绝对 URL、规范化、筛选（微秒）"
    ),
    "same links": "链接相同",
    "html.parser (standard library)": "html.parser（标准库）",
    "selectolax (lexbor, C)": "selectolax（lexbor，C 语言）",
    # Machine table.
    "date": "日期",
    "commit": "提交",
    "cpu": "处理器",
    "memory": "内存",
    "system": "系统",
    "python": "Python",
    "packages": "软件包",
    "tools": "工具",
}


def say(text: str, lang: str) -> str:
    """Return ``text`` in ``lang``: itself in English, its Chinese in Chinese.

    Raises KeyError for text that has no Chinese in ``ZH``, and ValueError
    for a language other than "en" and "zh".
    """
    if lang not in LANGUAGES:
        raise ValueError(f"no summary in {lang!r}: only {LANGUAGES}")
    return text if lang == "en" else ZH[text]
