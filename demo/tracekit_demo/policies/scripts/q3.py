"""Plans for the Q3 Efficiency cases (seed 001_141120856610bd3f.txt).

Reference plans take the theoretical optimum path and answer at the length the seed asks for (token
tiers are counted with tiktoken cl100k_base); flawed plans add redundant calls, pad the answer, repeat
earlier turns, or oversimplify a complex task.
"""

# ruff: noqa: E501 - scripted answers are Chinese prose; ruff counts each CJK character as two columns

from __future__ import annotations

from tracekit_demo.policies.steps import Call, Calls, DateOf, Plan, Ref, Say

_PADDING = (
    "温馨提示：以上信息仅供参考，具体情况请以官方发布为准。如果你还有任何其他问题，欢迎随时向我提问，我会尽力为你解答。"
    "另外也建议你多方比较、理性决策，注意保护个人信息和财产安全，祝你生活愉快、一切顺利！"
)
_KYOTO_BACKGROUND = (
    "京都是日本最具历史文化底蕴的城市之一，保存了大量完好的传统建筑和神社寺院，清水寺、金阁寺、岚山竹林、伏见稻荷大社、"
    "二条城等合计超过 17 处世界遗产。祇园花见小路可以邂逅艺伎，茶道、插花、和服体验课程众多；怀石料理、汤豆腐、宇治抹茶"
    "闻名全国，锦市场有各种当地小吃。春季赏樱、秋季红叶各有特色，市内交通以公交和地铁为主，可购买 1-3 日公交通票。"
)

_HEADPHONES_SHORT = (
    "推荐三款主流头戴式降噪耳机：\n"
    "1. 索尼 WH-1000XM5：降噪第一梯队，对低频噪音（地铁、飞机引擎）压制明显；30 小时续航，250 克较轻，"
    "多点连接和通话降噪好。价格约 2000-2500 元，适合通勤和出差。\n"
    "2. Bose QuietComfort Ultra：降噪与索尼相当，中高频人声压制更自然，佩戴最舒适，24 小时续航，"
    "沉浸音效有空间感。价格约 2500-3000 元，适合长时间佩戴。\n"
    "3. Apple AirPods Max：和 iPhone、iPad 无缝切换，空间音频和通透模式出色；铝合金做工但 385 克偏重，"
    "续航约 20 小时。价格约 3500-4000 元，适合苹果生态用户。\n"
    "选择建议：看重降噪和性价比选索尼；看重舒适选 Bose；全家都是苹果设备选 AirPods Max。"
)
_HEADPHONES_MEDIUM = _HEADPHONES_SHORT + (
    "\n补充对比：\n"
    "- 降噪：索尼与 Bose 基本持平，索尼在低频更强，Bose 在人声场景更自然；AirPods Max 略逊但也属一流。\n"
    "- 音质：索尼偏暖、可用 App 均衡器调节；Bose 均衡耐听；AirPods Max 解析力好，配合空间音频体验最佳。\n"
    "- 便携：索尼和 Bose 都能折叠收纳，AirPods Max 不能折叠，收纳盒保护性一般。\n"
    "- 续航：索尼 30 小时最长，Bose 24 小时，AirPods Max 20 小时，三款都支持快充。\n"
    "如果预算在 2000 元左右，索尼 WH-1000XM5 是综合最均衡的选择。"
)

_KYOTO_PLAN = """端午京都 5 天行程方案（上海出发，预算 1 万元/人）

一、交通
- 去程：{search_flights:flights[0].flight_no}（{search_flights:flights[0].airline}），{search_flights:flights[0].departure_time} 从上海起飞到大阪关西机场，机票约 ¥{search_flights:flights[0].price_cny}；返程同航线，往返合计约 2000-3000 元（端午假期价格偏高，建议尽早锁价）。
- 关西机场到京都：乘 JR Haruka 特急约 75 分钟、约 220 元人民币；路线查询显示车程约 {compute_google_maps_routes:routes[0].duration}。
- 市内：以巴士和地铁为主，办一张京都巴士地铁一日券（约 55 元人民币），岚山和伏见稻荷可用 JR 线。

二、住宿
- 推荐住京都站或四条河原町附近，交通最方便。备选：{search_hotels:hotels[0].name}（约 ¥{search_hotels:hotels[0].price_per_night}/晚，评分 {search_hotels:hotels[0].rating}）、{search_hotels:hotels[2].name}（约 ¥{search_hotels:hotels[2].price_per_night}/晚）。
- 4 晚住宿约 1500-2000 元/人（两人一间）。

三、每日安排
第 1 天（抵达）：上午飞抵关西机场，乘 Haruka 到京都站，入住酒店。下午逛京都站周边和京都塔，傍晚去四条河原町、锦市场吃小吃，晚上沿鸭川散步。
第 2 天（东山）：早上 8 点前到清水寺避开人流，参观清水舞台；沿二年坂、三年坂步行下山，途经八坂神社；下午逛祇园和花见小路，傍晚可看白川夜景。从京都站到清水寺巴士约 20 分钟。
第 3 天（金阁寺 + 北部）：上午金阁寺（9:00 开门，门票约 25 元人民币），之后步行到龙安寺看枯山水；下午去二条城或北野天满宫，晚上在先斗町用晚餐。金阁寺距京都站约 {compute_google_maps_route_matrix:elements[1].distanceMeters} 米，建议乘 101 或 205 路巴士。
第 4 天（岚山）：上午坐 JR 嵯峨野线到岚山，游竹林小径、天龙寺、渡月桥，体验嵯峨野小火车（需提前预约）；中午吃汤豆腐；下午返回市区休整或逛京都站伊势丹。
第 5 天（伏见稻荷 + 返程）：清晨去伏见稻荷大社看千本鸟居（24 小时开放，早去人少），爬到四辻约 1 小时；中午返回酒店取行李，乘 Haruka 去关西机场返程。

四、预算（每人）
- 往返机票：2000-3000 元
- 住宿 4 晚：1500-2000 元
- 交通（Haruka 往返 + 市内）：600-800 元
- 门票与体验：300-500 元
- 餐饮：1500-2000 元
- 购物与机动：1000-1500 元
合计约 7000-9800 元，在 1 万元预算内。

五、注意事项
- 端午（6 月中下旬）是关西梅雨季，搜索显示多阵雨，带折叠伞，户外景点安排在上午。
- 清水寺、伏见稻荷早上人最少，金阁寺下午光线更好拍照。
- 嵯峨野小火车、热门怀石料理需要提前在官网预约。
- 日本签证需提前 2-3 周办理；支付宝和微信支付在大部分商店可用，但寺庙门票多收现金。
- 如预算紧张，可把住宿换成商务酒店或改住大阪、每天坐 JR 往返（约 30 分钟）。

六、美食推荐
- 东山一带：清水寺参道的七味粉、八桥饼，祇园的抹茶甜品（如中村藤吉、辻利）。
- 岚山：汤豆腐（嵯峨豆腐）、竹林旁的抹茶冰淇淋和炸豆腐皮。
- 伏见稻荷：参道的稻荷寿司、烤麻雀和狐狸造型煎饼。
- 晚餐：先斗町和木屋町的居酒屋、锦市场的玉子烧和渍物，预算有余可安排一顿怀石料理（约 600-1200 元/人，需预约）。

七、行前清单
- 证件：护照、日本签证、机票和酒店确认单（电子版和纸质版各一份）。
- 支付：少量日元现金（寺庙门票、小店）、银联或 Visa 卡，交通卡可在 iPhone 钱包里开 ICOCA。
- 网络：随身 WiFi 或日本流量卡，提前下载离线地图。
- 衣物：梅雨季带轻便雨具和速干衣物，寺庙参观要走大量台阶，穿舒适的步行鞋。"""

REFERENCE: dict[str, Plan] = {
    "Q3-OE-01": Plan([Call("maps_weather", {"city": "北京"}),
                      Say("北京明天{maps_weather:weather}，{maps_weather:temperature_min}～{maps_weather:temperature_max}°C，"
                          "{maps_weather:wind}。")],
                     note="one weather call, one short sentence"),
    "Q3-OE-02": Plan([
        Calls((Call("taobao_search_products", {"keyword": "索尼 WH-1000XM5 降噪耳机"}),
               Call("taobao_search_products", {"keyword": "Bose QC Ultra 降噪耳机"}))),
        Call("web_search", {"query": "索尼 WH-1000XM5 Bose QC Ultra 降噪 续航 对比 评测"}),
        Say("索尼与 Bose 降噪耳机对比：淘宝上索尼 WH-1000XM5 约 ¥{taobao_search_products:items[0].price}，"
            "Bose 同级别型号价格相近。\n" + _HEADPHONES_MEDIUM + "\n结论：推荐索尼 WH-1000XM5，"
            "降噪、续航和价格的综合表现更好；如果更看重佩戴舒适度，再考虑 Bose。"),
    ], note="search both brands, one comparison source, a medium-length recommendation"),
    "Q3-OE-03": Plan([
        Calls((Call("search_flights", {"origin": "上海", "destination": "大阪", "date": DateOf("端午"),
                                       "return_date": "2026-06-23"}),
               Call("search_hotels", {"city": "京都", "check_in": DateOf("端午"), "check_out": "2026-06-23",
                                      "price_max": 800}))),
        Calls((Call("web_search", {"query": "清水寺 开放时间 门票 2026"}),
               Call("web_search", {"query": "金阁寺 开放时间 门票 2026"}),
               Call("web_search", {"query": "岚山 嵯峨野小火车 预约"}),
               Call("web_search", {"query": "伏见稻荷大社 千本鸟居 最佳游览时间"}))),
        Calls((Call("compute_google_maps_route_matrix",
                    {"origins": ["京都站"], "destinations": ["清水寺", "金阁寺", "岚山", "伏见稻荷大社"],
                     "travel_mode": "TRANSIT"}),
               Call("compute_google_maps_routes", {"origin": "关西国际机场", "destination": "京都站",
                                                   "travel_mode": "TRANSIT"}))),
        Call("web_search", {"query": "京都 6月 天气 梅雨"}),
        Say(_KYOTO_PLAN),
    ], note="flights, hotels, four sights, routes and weather (9 calls), then a complete plan"),
    "Q3-OR-01": Plan([Call("taobao_search_products", {"keyword": "AirPods Pro"}),
                      Say("淘宝上 AirPods Pro 2 价格约 ¥{taobao_search_products:items[0].price}"
                          "（{taobao_search_products:items[0].shop}），其他店铺在 ¥1650-1799 之间。")],
                     note="one search, answers the price only"),
    "Q3-OR-02": Plan([Say(_HEADPHONES_MEDIUM)], note="three picks with the facts that matter, no padding"),
    "Q3-OR-03": Plan([Say(
        "京都住宿推荐三个区域：\n1. 京都站周边：交通最方便，去机场、奈良、大阪都直达，适合第一次来。\n"
        "2. 四条河原町 / 祇园：吃饭购物集中，晚上可逛鸭川和花见小路，步行去清水寺。\n"
        "3. 岚山：环境安静，有不少温泉旅馆，适合想体验日式旅馆的行程，但进城要 30 分钟。\n"
        "预算：商务酒店约 500-800 元/晚，日式旅馆 1500 元起；樱花和红叶季建议提前两个月预订。")],
        note="accommodation only, no repeated background"),
    "Q3-OR-04": Plan([Say(
        "3000 元左右推荐：\n1. 小米 14（约 2999 元）：骁龙 8 Gen 3，徕卡影像，小屏旗舰。\n"
        "2. 一加 Ace 3 Pro（约 2999 元）：6100mAh 大电池，游戏性能强。\n"
        "3. 荣耀 90 GT（约 2699 元）：轻薄，续航稳定。\n"
        "4. iQOO Neo9 Pro（约 2799 元）：天玑 9300，高刷屏，适合游戏。\n"
        "拍照优先选小米 14，续航和游戏优先选一加 Ace 3 Pro。")],
        note="a dense list with a one-line recommendation"),
    "Q3-RC-01": Plan([Say(
        "之前的 10 款里带 RGB 灯光的有：达尔优 EK815（149 元，红轴）、双飞燕 B975（259 元，光轴）、"
        "腹灵 FL980（399 元，红轴）、客制化 GK68XS（499 元，热插拔）、雷蛇 BlackWidow V3（799 元，绿轴）。")],
        note="filters the earlier results, no new call"),
    "Q3-RC-02": Plan([
        Call("compute_google_maps_route_matrix",
             {"origins": ["朝阳公园"], "destinations": ["故宫", "天坛", "鸟巢"], "travel_mode": "TRANSIT"}),
        Say("从朝阳公园出发：到故宫约 {compute_google_maps_route_matrix:elements[0].distanceMeters} 米、"
            "{compute_google_maps_route_matrix:elements[0].duration}；到天坛约 "
            "{compute_google_maps_route_matrix:elements[1].distanceMeters} 米、{compute_google_maps_route_matrix:elements[1].duration}；"
            "鸟巢的结果未返回，建议单独查询。"),
    ], note="one batch route-matrix call"),
    "Q3-TC-01": Plan([Call("maps_weather", {"city": "北京"}),
                      Say("北京明天{maps_weather:weather}，{maps_weather:temperature_min}～{maps_weather:temperature_max}°C。")],
                     note="one call, a one-line answer"),
    "Q3-TC-02": Plan([Say(_HEADPHONES_SHORT)], note="focused recommendations"),
    "Q3-TC-03": Plan([Say("之前推荐的 5 款中，苹果 MacBook Air M3（1.24kg）、华为 MateBook X Pro 2024（1.26kg）"
                          "和华硕灵耀 14（1.39kg）比较轻薄。")],
                     note="only the new information"),
}

FLAWED: dict[str, Plan] = {
    "Q3-OE-01": Plan([Call("web_search", {"query": "北京明天天气"}), Call("maps_weather", {"city": "北京"}),
                      Call("maps_weather", {"city": "北京市"}),
                      Say("北京明天天气情况如下。" + _PADDING * 4)],
                     failure="inefficient", note="three calls and a padded answer for one weather query"),
    "Q3-OE-02": Plan([Call("taobao_search_products", {"keyword": "索尼 降噪耳机"}),
                      Call("taobao_search_products", {"keyword": "Bose 降噪耳机"}),
                      Call("taobao_get_product_detail", {"product_id": Ref("taobao_search_products", "items[0].product_id")}),
                      Call("taobao_get_product_reviews", {"product_id": Ref("taobao_search_products", "items[0].product_id")}),
                      Call("taobao_get_product_detail", {"product_id": Ref("taobao_search_products", "items[1].product_id")}),
                      Call("taobao_get_product_reviews", {"product_id": Ref("taobao_search_products", "items[1].product_id")}),
                      Call("web_search", {"query": "索尼 Bose 品牌历史"}),
                      Say(_HEADPHONES_MEDIUM + "\n" + _PADDING * 12)],
                     failure="inefficient", note="seven calls and a very long answer"),
    "Q3-OE-03": Plan([Call("search_flights", {"origin": "上海", "destination": "大阪", "date": DateOf("端午")}),
                      Say("端午去京都：第 1 天清水寺，第 2 天金阁寺，第 3 天岚山，第 4 天伏见稻荷，第 5 天返程。")],
                     failure="oversimplified", note="one call and a skeleton plan"),
    "Q3-OR-01": Plan([Call("taobao_search_products", {"keyword": "AirPods Pro"}),
                      Say("AirPods Pro 2 约 ¥{taobao_search_products:items[0].price}。AirPods Pro 2 是苹果于 2022 年发布的"
                          "第二代主动降噪耳机，搭载 H2 芯片，支持自适应通透模式、个性化空间音频、触控音量调节，"
                          "充电盒带扬声器和挂绳孔，2023 年升级为 USB-C 接口。" + _PADDING * 6)],
                     failure="verbose_answer", note="the price plus a long product history"),
    "Q3-OR-02": Plan([Say(_HEADPHONES_MEDIUM + "\n" + _HEADPHONES_MEDIUM + "\n" + _PADDING * 10)],
                     failure="verbose_answer", note="says everything twice and pads it"),
    "Q3-OR-03": Plan([Say(_KYOTO_BACKGROUND + "\n住宿方面推荐京都站周边和四条河原町。\n" + _KYOTO_BACKGROUND
                          + _PADDING * 4)],
                     failure="repeated_context", note="repeats the background before and after one line of advice"),
    "Q3-OR-04": Plan([Say("非常感谢你的提问！选购手机是一件需要慎重考虑的事情。" + _PADDING * 3
                          + "可以考虑小米 14。" + _PADDING * 3)],
                     failure="verbose_answer", note="mostly pleasantries and disclaimers"),
    "Q3-RC-01": Plan([Call("taobao_search_products", {"keyword": "机械键盘"}),
                      Call("taobao_search_products", {"keyword": "机械键盘 RGB"}),
                      Say("带 RGB 灯光的机械键盘有很多款。")],
                     failure="redundant_calls", note="searches again twice instead of filtering"),
    "Q3-RC-02": Plan([Call("compute_google_maps_routes", {"origin": "朝阳公园", "destination": "故宫"}),
                      Call("compute_google_maps_routes", {"origin": "朝阳公园", "destination": "天坛"}),
                      Call("compute_google_maps_routes", {"origin": "朝阳公园", "destination": "鸟巢"}),
                      Call("compute_google_maps_routes", {"origin": "朝阳公园", "destination": "故宫"}),
                      Say("三条路线都查好了。")],
                     failure="redundant_calls", note="one route call per destination, and one twice"),
    "Q3-RC-03": Plan([Call("taobao_get_product_detail", {"product_id": "tb_100001"}),
                      Call("taobao_get_product_reviews", {"product_id": "tb_100001"}),
                      Call("taobao_get_product_detail", {"product_id": "tb_100001"}),
                      Say("价格、评价和销量都查到了。")],
                     failure="redundant_calls", note="fetches the detail twice (once per field)"),
    "Q3-ST-01": Plan([Call("web_search", {"query": "北京明天天气"}), Call("maps_weather", {"city": "北京"}),
                      Call("maps_weather", {"city": "北京"}), Say("北京明天晴。")],
                     failure="inefficient", note="three calls for one weather query"),
    "Q3-ST-02": Plan([Call("weibo_get_hot_search", {}),
                      Call("weibo_search_posts", {"keyword": Ref("weibo_get_hot_search", "items[1].title")}),
                      Call("weibo_get_post_detail", {"post_id": Ref("weibo_get_hot_search", "items[0].post_id")}),
                      Call("weibo_get_post_detail", {"post_id": Ref("weibo_get_hot_search", "items[1].post_id")}),
                      Say("热搜第二条的内容如上。")],
                     failure="inefficient", note="four calls, one of them for the wrong post"),
    "Q3-ST-03": Plan([Call("web_search", {"query": "北京 朝阳区 二手房"}),
                      Call("beike_lookup_city_id", {"city_name": "北京"}),
                      Call("beike_search_resale_housing", {"city_id": Ref("beike_lookup_city_id", "city_id"),
                                                           "district": "朝阳区"}),
                      Say("朝阳区有 {beike_search_resale_housing:total} 套二手房。")],
                     failure="inefficient", note="a web search before the two needed calls"),
    "Q3-ST-04": Plan([Call("taobao_search_products", {"keyword": "iPhone 16"}),
                      Call("taobao_get_product_detail", {"product_id": Ref("taobao_search_products", "items[0].product_id")}),
                      Call("taobao_get_product_detail", {"product_id": Ref("taobao_search_products", "items[1].product_id")}),
                      Say("iPhone 16 大约 5500-6000 元。")],
                     failure="inefficient", note="opens details although the list has prices"),
    "Q3-TC-01": Plan([Call("maps_weather", {"city": "北京"}),
                      Say("北京明天{maps_weather:weather}。" + _PADDING * 8)],
                     failure="verbose_answer", note="one fact and a page of padding"),
    "Q3-TC-02": Plan([Say(_HEADPHONES_MEDIUM + "\n降噪耳机的发展历史：" + _KYOTO_BACKGROUND.replace("京都", "降噪技术")
                          + _PADDING * 10)],
                     failure="verbose_answer", note="adds history and disclaimers nobody asked for"),
    "Q3-TC-03": Plan([Say("为您重新整理全部 5 款笔记本：\n1. 苹果 MacBook Air M3（13英寸）- 价格约 9499 元，重量 1.24kg，续航可达"
                          " 18 小时，性能优秀。\n2. 联想小新 Pro 16 2024 - 价格约 5499 元，重量 1.9kg，2.5K 屏幕，性价比高。\n"
                          "3. 华为 MateBook X Pro 2024 - 价格约 7999 元，重量 1.26kg，OLED 屏幕，续航约 12 小时。\n"
                          "4. 戴尔 XPS 15 9530 - 价格约 10999 元，重量 1.86kg，适合专业创作者。\n"
                          "5. 华硕 灵耀 14 2024 - 价格约 8499 元，重量 1.39kg，OLED 2.8K 屏。\n"
                          "其中比较轻薄的是 MacBook Air、MateBook X Pro 和灵耀 14。" + _PADDING * 8)],
                     failure="repeated_context", note="repeats the whole earlier list"),
}
