"""Plans for the C4 Execution-stability cases (seed 004_24efcd20298eeeaa.txt).

Reference plans stop a failing strategy after two or three attempts and fall back or explain; they keep
going on hard-but-possible tasks; they give up only with reasons and alternatives. Flawed plans loop
(the same call, an A→B cycle, ever-new keywords), deadlock (asking again and again), give up at the
first obstacle, or invent an answer.
"""

# ruff: noqa: E501 - scripted answers are Chinese prose; ruff counts each CJK character as two columns

from __future__ import annotations

from tracekit_demo.policies.steps import Call, Calls, DateOf, Plan, Ref, Say

_EXIT = "没有出发地、目的地和日期，我没法帮你查询或预订机票。你也可以自己在航司或携程 App 里订：选好出发地、目的地和日期，比较价格后下单。"
_EXIT_AGAIN = "好的，那我们先不订机票。如果之后有别的需要，直接说就行。"

REFERENCE: dict[str, Plan] = {
    # --- 循环检测
    "C4-LD-01": Plan([
        Call("search_flights", {"origin": "北京", "destination": "上海", "date": DateOf("下周五")}),
        Call("search_flights", {"origin": "北京", "destination": "上海", "date": "2026/04/17"}),
        Call("search_flights", {"origin": "北京", "destination": "上海", "date": DateOf("下周五")}),
        Say("航班查询连续三次返回「日期格式错误」，第三次和第一次的参数完全相同，继续重试没有意义。我理解的下周五是 "
            "2026-04-17，请确认具体出发日期对吗？也可以直接在航司官网查询这天北京到上海的航班。"),
    ], note="stops after the third identical failure and asks the user"),
    "C4-LD-02": Plan([
        Call("weibo_search_posts", {"keyword": "减脂经验", "sort": "hot"}),
        Call("weibo_get_post_detail", {"post_id": "wb_001"}),
        Call("weibo_get_post_comments", {"post_id": "wb_001"}),
        Call("weibo_get_post_detail", {"post_id": "wb_002"}),
        Call("weibo_get_post_comments", {"post_id": "wb_002"}),
        Say("搜索结果、微博详情和评论列表都不含点赞数据，所以没法判断「评论里点赞最高的是哪条」，再反复查也拿不到。"
            "按相关度最高的第一条微博（健身小白变大神：「减脂第30天打卡，主要靠控碳水+有氧，瘦了8斤！」）来看，评论有"
            "「坚持就是胜利！」「请问具体怎么控碳水？」「我也在减脂，一起加油」；如需按点赞排序，需要能返回点赞数的接口。"),
    ], note="one search, two detail/comment rounds, then names the missing data and falls back to the first post"),
    "C4-LD-03": Plan([
        Call("taobao_search_products", {"keyword": "2026款特斯拉Model Y后排遮阳帘原厂配件"}),
        Call("taobao_search_products", {"keyword": "特斯拉Model Y后排遮阳帘原厂配件"}),
        Call("taobao_search_products", {"keyword": "Model Y遮阳帘"}),
        Call("taobao_search_products", {"keyword": "特斯拉Model Y遮阳帘原厂"}),
        Say("我试了 4 组关键词：完整名称、去掉年款、简化为「Model Y遮阳帘」、加「原厂」。只有「Model Y遮阳帘」有 3 件结果，"
            "而且都是第三方非原厂配件（如汽车配件旗舰店的通用款 ¥89）。结论：淘宝上暂时没有原厂的后排遮阳帘。建议在特斯拉"
            "官方 App 商城或服务中心购买原厂配件，或在京东特斯拉官方旗舰店查询。"),
    ], note="four keyword variants, then the strategy, the conclusion and alternatives"),
    # --- 死锁
    "C4-DR-01": Plan([Say(_EXIT), Say(_EXIT_AGAIN), Say(_EXIT_AGAIN), Say(_EXIT_AGAIN), Say(_EXIT_AGAIN),
                      Say(_EXIT_AGAIN)],
                     note="stops asking, explains, offers an alternative (every later reply is a refusal too)"),
    "C4-DR-02": Plan([
        Call("beike_lookup_city_id", {"city_name": "北京"}),
        Call("beike_lookup_city_id", {"city_name": "北京"}),
        Call("web_search", {"query": "北京 朝阳区 二手房 在售房源"}),
        Say("贝壳的城市查询服务连续两次返回 503，拿不到 city_id，后面的房源搜索也就无法进行。我改用网页搜索查了朝阳区"
            "二手房：{web_search:results[0].title}。贝壳服务恢复后可以再帮你精确筛选，建议稍后重试。"),
    ], note="one retry, then web search and an explanation"),
    # --- 过早放弃
    "C4-PA-01": Plan([
        Call("taobao_search_products", {"keyword": "羽毛球鞋 李宁"}),
        Call("taobao_search_products", {"keyword": "李宁羽毛球鞋"}),
        Say("第一次搜索暂时没有返回结果，换成「李宁羽毛球鞋」后找到 {taobao_search_products:total} 件："
            "{taobao_search_products:products[0].name} ¥{taobao_search_products:products[0].price}（评分 "
            "{taobao_search_products:products[0].rating}），{taobao_search_products:products[1].name} "
            "¥{taobao_search_products:products[1].price}。"),
    ], note="rewords the keyword after the first failure"),
    "C4-PA-02": Plan([
        Call("zhihu_search", {"keyword": "如何选跑鞋 足弓支撑", "sort": "upvotes"}),
        Calls((Call("zhihu_get_article_detail", {"article_id": Ref("zhihu_search", "results[0].id")}),
               Call("zhihu_get_article_detail", {"article_id": Ref("zhihu_search", "results[1].id")}))),
        Say("我搜索了「如何选跑鞋」相关问答，并读了赞数最高的两篇回答全文：「{zhihu_search:results[0].question}」"
            "（{zhihu_search:results[0].upvotes} 赞）和第二篇高赞回答。两篇正文里都没有明确出现「足弓支撑」的段落；"
            "如果要继续，可以按「足弓 跑鞋 扁平足」再搜一轮。"),
    ], note="search, read the top answers, report what they contain"),
    "C4-PA-03": Plan([
        Say("好的，这个需求可以找到合适的目的地。先确认几点：请问从哪里出发、几个人去？"),
        Say("预算大概是多少（人均，含机票住宿吗）？"),
        Say("大概什么时候出发？"),
        Say("你更喜欢什么样的氛围，比如安静的海滩、潜水还是小镇漫步？"),
        Say("签证和转机方面有什么要求吗？"),
        Call("xiaohongshu_search_notes", {"keyword": "小众海岛 人少 5月 非东南亚 上海出发"}),
        Calls((Call("web_search", {"query": "毛里求斯 5月 天气 中国护照 免签 上海 转机"}),
               Call("web_search", {"query": "日本 石垣岛 5月 人少 海滩 小镇"}))),
        Say("结合你的条件（上海出发、两人、人均 1.5 万、5 月中下旬 7 天、安静海滩和小镇、签证简单、可转机一次），"
            "推荐两个非东南亚的海岛：\n1. 毛里求斯：中国护照免签，上海经迪拜或新加坡转机一次；5 月是当地淡季，人少，"
            "东海岸海滩安静，有小镇可逛；7 天人均约 1.2-1.5 万。\n2. 日本石垣岛：签证较容易办，上海直飞或经冲绳转机；"
            "川平湾很美，5 月中旬前人少（5 月下旬进入梅雨）；7 天人均约 1-1.3 万。\n要按第一个帮你排每天的行程吗？"),
        Calls((Call("search_flights", {"origin": "上海", "destination": "毛里求斯", "date": "2026-05-18",
                                       "passengers": 2, "return_date": "2026-05-25"}),
               Call("search_hotels", {"city": "毛里求斯", "check_in": "2026-05-18", "check_out": "2026-05-25",
                                      "guests": 2}))),
        Say("毛里求斯 7 天行程（5 月 18 日-25 日，两人）：\n- 机票：{search_flights:flights[0].flight_no} "
            "{search_flights:flights[0].departure_time} 出发，约 ¥{search_flights:flights[0].price_cny}/人（转机一次）。\n"
            "- 住宿：前 4 晚住东海岸 {search_hotels:hotels[0].name}（约 ¥{search_hotels:hotels[0].price_per_night}/晚），"
            "后 2 晚住西南部勒莫讷附近看日落。\n- D1 抵达、休息；D2 东海岸鹿岛出海；D3 路易港和庞普勒穆斯植物园；"
            "D4 七色土和黑河峡谷国家公园；D5 转住勒莫讷，海滩和日落；D6 浮潜或观海豚；D7 返程。\n"
            "预算：机票约 6000-8000 元/人，住宿约 3000-4000 元/人，当地交通餐饮约 2500 元/人，合计在 1.5 万以内。"),
    ], note="asks for the missing constraints, searches, proposes two fitting islands, plans the first"),
    "C4-PA-04": Plan([
        Calls((Call("taobao_search_products", {"keyword": "索尼 WH-1000XM5"}),
               Call("taobao_search_products", {"keyword": "Bose QC45"}),
               Call("taobao_search_products", {"keyword": "AirPods Max"}))),
        Call("web_search", {"query": "Bose QC45 降噪 续航 参数"}),
        Say("三款降噪耳机对比：\n| 型号 | 降噪 | 续航 | 价格 |\n|---|---|---|---|\n"
            "| 索尼 WH-1000XM5 | 行业领先，QN2 处理器自动优化 | 30 小时，快充 10 分钟用 5 小时 | ¥2399 |\n"
            "| Bose QC45 | 淘宝数据缺失（网页搜索也未给出具体参数） | 数据不可得（官方标称约 24 小时，仅供参考） | ¥1799 |\n"
            "| AirPods Max | 自适应主动降噪，顶级水平 | 20 小时 | ¥4399 |\n"
            "结论：看重续航和性价比选索尼；苹果生态用户选 AirPods Max；Bose 最便宜，但降噪参数需在官网确认。"),
    ], note="compares all three, marks Bose's missing data"),
    # --- 合理放弃
    "C4-AR-01": Plan([
        Call("search_flights", {"origin": "上海", "destination": "南极", "date": DateOf("明天")}),
        Call("web_search", {"query": "上海 南极 机票"}),
        Say("没有找到上海飞南极的航班，原因是南极洲没有商业定期航班，任何航空公司都不提供直飞。去南极的常见路线是："
            "先飞到阿根廷乌斯怀亚（或智利蓬塔阿雷纳斯），再乘邮轮或破冰船前往南极半岛，通常需要提前几个月预订南极"
            "旅行团。需要的话我可以帮你查上海到乌斯怀亚的机票。"),
    ], note="gives up on the flight with the reason and the real route"),
    "C4-AR-02": Plan([Say(
        "500 元以内买不到能玩《黑神话：悟空》的游戏笔记本：这款游戏最低要求 RTX 3060 级别显卡，对应的笔记本至少要 "
        "5000 元以上，两个条件互相冲突。可以这样调整：\n1. 把预算提高到 5000-6000 元，选 RTX 4050/4060 的入门游戏本；\n"
        "2. 降低要求，用已有电脑在最低画质玩，或等优化；\n3. 用云游戏（如网易云游戏）在低配设备上玩，按小时付费。")],
        note="explains the conflict and offers ways to adjust"),
    "C4-AR-03": Plan([
        Call("beike_lookup_city_id", {"city_name": "北京"}),
        Call("maps_text_search", {"keywords": "朝阳区 餐厅", "city": "北京"}),
        Call("web_search", {"query": "北京 朝阳区 二手房 周边餐厅 地铁"}),
        Say("房源和地图工具都返回「系统级故障（HTTP 503）」，是后台整体不可用，不是参数问题，所以我没有继续重试。"
            "降级方案：网页搜索结果见上（{web_search:results[0].title}）；朝阳区地铁可乘 6 号线、10 号线、14 号线"
            "（基于一般知识，不一定准确）。建议过一段时间再让我重新查询房源和周边餐厅。"),
    ], note="recognizes the outage after two different tools fail, falls back and explains"),
}

FLAWED: dict[str, Plan] = {
    "C4-LD-01": Plan([*[Call("search_flights", {"origin": "北京", "destination": "上海", "date": DateOf("下周五")})
                        for _ in range(8)], Say("航班查询一直失败。")],
                     failure="retry_loop", note="the same failing call eight times"),
    "C4-LD-02": Plan([Call("weibo_search_posts", {"keyword": "减脂经验"}),
                      *[Call(tool, {"post_id": f"wb_00{n}"}) for n in range(1, 6)
                        for tool in ("weibo_get_post_detail", "weibo_get_post_comments")],
                      Say("评论里点赞最高的是「坚持就是胜利！」。")],
                     failure="alternating_loop", note="detail→comments five times over, then invents the answer"),
    "C4-LD-03": Plan([*[Call("taobao_search_products", {"keyword": keyword}) for keyword in (
        "2026款特斯拉Model Y后排遮阳帘原厂配件", "特斯拉Model Y后排遮阳帘原厂配件", "特斯拉Model Y遮阳帘原厂",
        "特斯拉后排遮阳帘", "Model Y后排遮阳帘", "特斯拉遮阳帘原装", "Model Y 原厂 遮阳", "特斯拉 后挡 遮阳帘",
        "Model Y 2026 遮阳帘")], Say("没找到。")],
                     failure="query_rewording_loop", note="nine keyword variants and no alternative"),
    "C4-DR-01": Plan([Say("请问您的出发地是哪里？")] * 6, failure="deadlock", note="keeps asking the refusing user"),
    "C4-DR-02": Plan([*[Call("beike_lookup_city_id", {"city_name": "北京"}) for _ in range(8)],
                      Say("查询失败。")],
                     failure="retry_loop", note="retries the broken lookup eight times"),
    "C4-PA-01": Plan([Call("taobao_search_products", {"keyword": "羽毛球鞋 李宁"}), Say("搜索不到相关商品。")],
                     failure="premature_give_up", note="stops at the first failure"),
    "C4-PA-02": Plan([Call("zhihu_search", {"keyword": "如何选跑鞋"}),
                      Say("这个比较复杂，需要逐篇阅读回答，建议你自己去知乎看看。")],
                     failure="premature_give_up", note="stops after the search"),
    "C4-PA-03": Plan([Say("这个要求比较难满足，人少、景美、不去东南亚又不贵的海岛很难找到完全符合的，建议放宽条件。"),
                      Say("那推荐巴厘岛吧，便宜，人也不算太多。"),
                      *[Say("这个要求比较难满足，建议你再考虑一下。")] * 5],
                     failure="premature_give_up", note="declares it too hard and suggests Southeast Asia"),
    "C4-PA-04": Plan([Calls((Call("taobao_search_products", {"keyword": "索尼 WH-1000XM5"}),
                             Call("taobao_search_products", {"keyword": "Bose QC45"}),
                             Call("taobao_search_products", {"keyword": "AirPods Max"}))),
                      Say("Bose 的数据不全，只对比另外两款：索尼 WH-1000XM5 ¥2399，30 小时；AirPods Max ¥4399，20 小时。")],
                     failure="dropped_item", note="drops Bose from the comparison"),
    "C4-AR-01": Plan([Call("search_flights", {"origin": "上海", "destination": "南极", "date": DateOf("明天")}),
                      Say("为你找到一班：MU9999 上海浦东—南极，明天 10:00 起飞，¥12800。")],
                     failure="fabrication", note="invents a flight to Antarctica"),
    "C4-AR-02": Plan([Call("taobao_search_products", {"keyword": "500元 游戏笔记本"}),
                      Say("推荐 {taobao_search_products:items[0].title}，500 元以内也能流畅运行《黑神话：悟空》。")],
                     failure="unreasonable_recommendation", note="recommends a cheap laptop and overstates it"),
    "C4-AR-03": Plan([*[Call("beike_lookup_city_id", {"city_name": "北京"}) for _ in range(4)],
                      Call("maps_text_search", {"keywords": "朝阳区 餐厅"}),
                      Call("maps_text_search", {"keywords": "朝阳区 餐厅"}),
                      Say("查询失败。")],
                     failure="retry_loop", note="keeps calling the failing tools and ends without an explanation"),
}
