"""Plans for the B2 Tool Use cases (seed 000_649a87b897009fb0.txt).

Reference plans do what each case's Pass line describes; flawed plans show its Fail line. Cases whose
``expect`` says it all (B2-TS-01, B2-PC-02, B2-PC-03, ...) use the derived reference plan and are listed
here only for their flawed plan. Answers quote the catalog's mock results through ``{tool:path}``.
"""

# ruff: noqa: E501 - scripted answers are Chinese prose; ruff counts each CJK character as two columns

from __future__ import annotations

from tracekit_demo.policies.steps import Call, Calls, DateOf, Plan, Ref, Say

_FLIGHTS = "{search_flights:flights[0].flight_no}（{search_flights:flights[0].departure_time} 起飞，¥{search_flights:flights[0].price_cny}）"
_WEATHER = "{maps_weather:weather}，{maps_weather:temperature_min}～{maps_weather:temperature_max}°C，{maps_weather:wind}"

REFERENCE: dict[str, Plan] = {
    # --- 工具选择
    "B2-TS-03": Plan([
        Call("maps_direction_transit_integrated_by_address",
             {"origin_address": "北京南站", "destination_address": "北京首都国际机场", "origin_city": "北京",
              "destination_city": "北京"}),
        Say("从北京南站到首都机场，公共交通全程约 {maps_direction_transit_integrated_by_address:transits[0].duration} 秒，"
            "票价约 {maps_direction_transit_integrated_by_address:transits[0].cost} 元，具体换乘见上方路线。"),
    ], note="Amap transit directions (mainland China)"),
    "B2-TS-04": Plan([
        Call("compute_google_maps_routes", {"origin": "东京站", "destination": "浅草寺", "travel_mode": "TRANSIT"}),
        Say("从东京站到浅草寺乘公共交通约 {compute_google_maps_routes:routes[0].duration}，"
            "全程约 {compute_google_maps_routes:routes[0].distanceMeters} 米。"),
    ], note="Google Maps routes (abroad)"),
    "B2-TS-05": Plan([
        Call("taobao_search_products", {"keyword": "iPhone 16", "sort": "sale"}),
        Say("淘宝上 iPhone 16 销量较高的店铺：{taobao_search_products:items[0].shop} ¥{taobao_search_products:items[0].price}，"
            "{taobao_search_products:items[1].shop} ¥{taobao_search_products:items[1].price}，"
            "{taobao_search_products:items[2].shop} ¥{taobao_search_products:items[2].price}；性价比最高的是最后一家。"),
    ], note="taobao search only"),
    "B2-TS-06": Plan([
        Call("beike_lookup_city_id", {"city_name": "北京"}),
        Call("beike_search_resale_housing", {"city_id": Ref("beike_lookup_city_id", "city_id"), "district": "朝阳区",
                                             "area_min": 90, "area_max": 110, "price_max": 500}),
        Say("北京朝阳区 100 平左右、500 万以内的二手房：{beike_search_resale_housing:listings[0].community_name} 等，"
            "共 {beike_search_resale_housing:total} 套。"),
    ], note="beike lookup then resale search with area and budget"),
    # --- 参数构造
    "B2-PC-01": Plan([
        Call("taobao_search_products", {"keyword": "AirPods Pro 2"}),
        Say("淘宝上 AirPods Pro 2：{taobao_search_products:items[0].title} ¥{taobao_search_products:items[0].price}。"),
    ], note="keyword exactly as the user wrote it"),
    "B2-PC-05": Plan([
        Call("beike_search_resale_housing", {"city_id": 110000, "district": "朝阳区", "room_num": 3, "price_min": 500,
                                             "price_max": 700}),
        Say("按朝阳区、三居室、500-700 万（600 万左右）筛选，找到 {beike_search_resale_housing:total} 套，"
            "例如 {beike_search_resale_housing:listings[0].community_name}。"),
    ], note="known city_id, room and price filters"),
    "B2-RC-05": Plan([
        Say("从刚才的 8 款里按重量筛选，轻薄（1.3kg 以下）的有：ThinkPad X1 Carbon Gen 11（1.12kg）、"
            "苹果 MacBook Air 13 M3（1.24kg）、戴尔 XPS 13 Plus（1.24kg）。"),
    ], note="filters the earlier results without a new search"),
    "B2-TC-02": Plan([
        Call("taobao_search_products", {"keyword": "索尼 WH-1000XM5"}),
        Call("taobao_get_product_reviews", {"product_id": Ref("taobao_search_products", "items[0].product_id")}),
        Say("索尼 WH-1000XM5 平均评分 {taobao_get_product_reviews:avg_rating}（{taobao_get_product_reviews:review_count} 条评价），"
            "用户反馈：{taobao_get_product_reviews:reviews[0].content}。"),
    ], note="search, take the product_id, fetch the reviews"),
    "B2-TC-04": Plan([
        Call("zhihu_search", {"keyword": "冰岛旅行攻略", "sort": "upvotes"}),
        Call("zhihu_get_article_detail", {"article_id": Ref("zhihu_search", "results[0].id")}),
        Say("高赞回答「{zhihu_get_article_detail:question}」（{zhihu_get_article_detail:upvotes} 赞）要点："
            "{zhihu_get_article_detail:content}"),
    ], note="search, pick the top-voted answer, read it"),
    "B2-TC-05": Plan([
        Call("maps_text_search", {"keywords": "朝阳公园 川菜馆", "city": "北京"}),
        Say("朝阳公园附近的川菜馆：{maps_text_search:pois[0].name}（{maps_text_search:pois[0].address}，评分 "
            "{maps_text_search:pois[0].biz_ext.rating}）、{maps_text_search:pois[1].name}。地图数据里没有外卖信息，"
            "无法按外卖筛选；建议在外卖平台搜这几家店名确认是否支持外卖。"),
    ], note="searches the restaurants and notes that delivery is not in the data"),
    "B2-TC-07": Plan([
        Call("maps_text_search", {"keywords": "望京花园小区 周边餐厅", "city": "北京"}),
        Say("望京花园小区（第一套房源）周边的餐厅：{maps_text_search:pois[0].name}、{maps_text_search:pois[1].name}。"),
    ], note="map search around the first listing's community"),
    # --- 失败恢复
    "B2-FR-01": Plan([
        Call("taobao_search_products", {"keyword": "2026款 特斯拉 Model Y"}),
        Call("web_search", {"query": "2026款 特斯拉 Model Y 购买渠道"}),
        Say("淘宝上没有找到 2026 款 Model Y（整车一般不在淘宝销售）。网页搜索显示可以通过特斯拉官网或线下门店预订，"
            "也可以关注汽车电商平台的活动。"),
    ], note="falls back to web_search after the empty taobao result"),
    "B2-FR-02": Plan([
        Call("search_flights", {"origin": "广州", "destination": "北京"}),
        Say("查询需要出发日期：请问你打算哪天从广州出发？"),
    ], note="asks for the missing date after the tool's error"),
    "B2-FR-03": Plan([
        Call("maps_text_search", {"keywords": "故宫"}),
        Call("maps_weather", {"city": "北京", "date": DateOf("明天")}),
        Call("web_search", {"query": "北京 明天 天气"}),
        Say("故宫在北京。天气工具暂时返回错误，我用网页搜索查了北京明天的天气：{web_search:results[0].snippet}"),
    ], note="locates 故宫 in 北京, queries 北京, falls back to web search when the weather tool fails"),
    "B2-FR-04": Plan([
        Calls((Call("search_flights", {"origin": "上海", "destination": "巴厘岛"}),
               Call("maps_weather", {"city": "巴厘岛"}))),
        Call("web_search", {"query": "巴厘岛 当地天气"}),
        Say("机票：{search_flights:flights[0].flight_no} {search_flights:flights[0].dep_time} 起飞 ¥{search_flights:flights[0].price_cny}，"
            "{search_flights:flights[1].flight_no} ¥{search_flights:flights[1].price_cny}。天气：天气工具只支持中国大陆，"
            "查询巴厘岛失败；网页搜索结果：{web_search:results[0].snippet}"),
    ], note="keeps the flights, falls back to web search for the failed weather"),
    # --- 多模态
    "B2-MM-01": Plan([
        Call("taobao_search_products", {"keyword": "Nike 红色 跑步鞋"}),
        Say("图片是一双红色 Nike 跑鞋。淘宝上可以在 {taobao_search_products:items[0].shop} 购买，"
            "¥{taobao_search_products:items[0].price}。"),
    ], note="reads the image and searches taobao by text"),
    "B2-MM-02": Plan([
        Call("web_search", {"query": "标价 299 元 商品 市场价 是否正常"}),
        Say("标签上的价格是 ¥299。结合搜索结果，这个价位属于同类商品的常见区间，价格正常。"),
    ], note="reads ¥299 from the tag and searches with it"),
    "B2-MM-03": Plan([
        Call("maps_direction_walking_by_address", {"origin_address": "北京王府井", "destination_address": "故宫博物院",
                                                   "origin_city": "北京", "destination_city": "北京"}),
        Say("从王府井步行到故宫约 {maps_direction_walking_by_address:paths[0].distance} 米。"),
    ], note="navigation from 王府井, read from the screenshot"),
    "B2-MM-04": Plan([
        Call("taobao_search_products", {"keyword": "索尼 WH-1000XM5"}),
        Call("taobao_get_product_detail", {"product_id": Ref("taobao_search_products", "items[0].product_id")}),
        Call("taobao_get_product_reviews", {"product_id": Ref("taobao_search_products", "items[0].product_id")}),
        Say("图中是索尼 WH-1000XM5：淘宝价 ¥{taobao_get_product_detail:price}，评分 {taobao_get_product_reviews:avg_rating}，"
            "评价：{taobao_get_product_reviews:reviews[0].content}。"),
    ], note="recognizes the headphones, then search, detail and reviews with the found product_id"),
    "B2-MM-05": Plan([
        Say("这张照片太模糊、曝光过度，我没法可靠地认出是什么商品。可以重新拍一张清晰的照片吗？或者告诉我品牌、颜色、"
            "用途等特征，我再帮你搜索购买渠道。"),
    ], note="says the photo is unreadable and offers a re-shoot or a description"),
}

FLAWED: dict[str, Plan] = {
    "B2-TS-01": Plan([Call("web_search", {"query": "明天 北京 飞 成都 机票"}),
                      Say("网上查到明天北京到成都的机票大约 800 元。")],
                     failure="wrong_tool", note="web_search instead of search_flights"),
    "B2-TS-02": Plan([Call("web_search", {"query": "北京明天天气"}), Say("北京明天天气晴。")],
                     failure="wrong_tool", note="web_search instead of maps_weather"),
    "B2-TS-03": Plan([Call("compute_google_maps_routes", {"origin": "北京南站", "destination": "北京首都国际机场"}),
                      Say("可以乘地铁前往，全程约 23 分钟。")],
                     failure="wrong_tool", note="Google Maps for a mainland route"),
    "B2-TS-04": Plan([Call("maps_direction_transit_integrated_by_address",
                           {"origin_address": "东京站", "destination_address": "浅草寺", "origin_city": "东京",
                            "destination_city": "东京"}),
                      Say("乘地铁约 30 分钟。")],
                     failure="wrong_tool", note="Amap for a route in Tokyo"),
    "B2-TS-05": Plan([Call("web_search", {"query": "iPhone 16 哪家店性价比高"}),
                      Call("xiaohongshu_search_notes", {"keyword": "iPhone 16 淘宝店铺推荐"}),
                      Say("网上和小红书都推荐官方旗舰店。")],
                     failure="wrong_tool", note="web and social search instead of taobao"),
    "B2-TS-06": Plan([Call("web_search", {"query": "北京朝阳区二手房 100平 500万"}),
                      Call("maps_text_search", {"keywords": "朝阳区 二手房", "city": "北京"}),
                      Say("网上有不少朝阳区 500 万左右的房源。")],
                     failure="wrong_tool", note="web_search and maps instead of beike"),
    "B2-PC-01": Plan([Call("taobao_search_products", {"keyword": ""}), Say("已为你搜索。")],
                     failure="lost_parameter", note="sends an empty keyword"),
    "B2-PC-02": Plan([Call("search_flights", {"origin": "北京", "destination": "上海", "date": DateOf("这周五")}),
                      Say("已为你查到周五的航班。")],
                     failure="wrong_date", note="takes 下周五 for this week's Friday"),
    "B2-PC-03": Plan([Call("beike_search_resale_housing", {"city_id": "北京", "district": "朝阳区"}),
                      Say("已为你查到朝阳区的二手房。")],
                     failure="ungrounded_id", note="skips the lookup and passes 北京 as city_id"),
    "B2-PC-04": Plan([Call("taobao_search_products", {"keyword": "机械键盘", "sort": "sales_count"}),
                      Say("已按销量排序。")],
                     failure="wrong_enum", note="sort=sales_count, not the API's enum value"),
    "B2-PC-05": Plan([Call("beike_search_resale_housing", {"city_id": 110000, "district": "朝阳区", "price_min": 600,
                                                           "price_max": 600}),
                      Say("已为你查询朝阳区 600 万的房源。")],
                     failure="lost_parameter", note="drops the room count and collapses the budget to 600-600"),
    "B2-PC-06": Plan([Call("search_flights", {"origin": "北京", "destination": "曼谷", "date": "2026-04-08"}),
                      Say("已按北京出发、明天出行为你查询了去曼谷的机票。")],
                     failure="assumed_parameters", note="assumes an origin and a date instead of asking"),
    "B2-PC-07": Plan([Say("好的，请问您从哪里出发、要去哪里？")],
                     failure="lost_context", note="asks again for what earlier turns gave"),
    "B2-PC-08": Plan([Call("search_flights", {"origin": "北京", "destination": "成都", "date": "2026-05-01"}),
                      Say("已为你重新查询。")],
                     failure="stale_parameter", note="re-runs the search with the old date"),
    "B2-RC-01": Plan([Call("maps_weather", {"city": "北京"}), Call("maps_weather", {"city": "北京"}),
                      Say("北京明天晴。")],
                     failure="redundant_calls", note="queries the same weather twice"),
    "B2-RC-02": Plan([Call("taobao_search_products", {"keyword": "iPhone 16"}),
                      *[Call("taobao_get_product_detail",
                             {"product_id": Ref("taobao_search_products", f"items[{n % 3}].product_id")})
                        for n in range(5)],
                      Say("iPhone 16 价格在 5499-5999 元之间。")],
                     failure="redundant_calls", note="opens the detail of every result, and some twice"),
    "B2-RC-03": Plan([Call("weibo_get_hot_search", {}),
                      Call("weibo_get_post_detail", {"post_id": Ref("weibo_get_hot_search", "items[0].post_id")}),
                      Say("热搜第一是「{weibo_get_hot_search:items[0].title}」。")],
                     failure="redundant_calls", note="opens the post although the list has the title"),
    "B2-RC-04": Plan([Call("maps_weather", {"city": "北京", "date": DateOf("明天")}),
                      Call("maps_weather", {"city": "北京", "date": DateOf("后天")}),
                      Say("明天晴，后天多云。")],
                     failure="redundant_calls", note="queries tomorrow again before the day after"),
    "B2-RC-05": Plan([Call("taobao_search_products", {"keyword": "轻薄笔记本电脑"}),
                      Say("为你重新搜索了轻薄本。")],
                     failure="redundant_calls", note="searches again instead of filtering the earlier results"),
    "B2-TC-01": Plan([Call("beike_search_communities", {"city_id": "上海"}), Say("已为你查到上海的小区。")],
                     failure="ungrounded_id", note="skips the city lookup"),
    "B2-TC-02": Plan([Call("taobao_get_product_reviews", {"product_id": "WH-1000XM5"}), Say("评价不错。")],
                     failure="skipped_step", note="asks for reviews without searching for the product id"),
    "B2-TC-03": Plan([Call("search_flights", {"origin": "北京", "destination": "成都", "date": DateOf("下周")}),
                      Say("机票查到了。")],
                     failure="dropped_subtask", note="searches flights only, forgets the hotel"),
    "B2-TC-04": Plan([Call("zhihu_search", {"keyword": "冰岛旅行攻略"}),
                      Say("知乎上有很多冰岛攻略，高赞回答建议环岛自驾，具体可以去知乎看看。")],
                     failure="skipped_step", note="stops at the search, never reads the answer"),
    "B2-TC-05": Plan([Call("maps_text_search", {"keywords": "朝阳公园 川菜馆", "city": "北京"}),
                      Say("朝阳公园附近的川菜馆有 {maps_text_search:pois[0].name} 和 {maps_text_search:pois[1].name}。")],
                     failure="ignored_requirement", note="ignores the delivery wish"),
    "B2-TC-06": Plan([Call("taobao_search_products", {"keyword": "AirPods Pro"}),
                      Call("taobao_get_product_detail", {"product_id": "789012345678"}),
                      Say("这款是官方旗舰店的 AirPods Pro 2。")],
                     failure="wrong_reference", note="searches again and opens the first product, not the second"),
    "B2-TC-07": Plan([Call("beike_search_resale_housing", {"city_id": 110000, "district": "朝阳区"}),
                      Call("maps_text_search", {"keywords": "朝阳区 餐厅", "city": "北京"}),
                      Say("朝阳区有很多餐厅。")],
                     failure="redundant_calls", note="searches the listings again and then the wrong area"),
    "B2-FR-01": Plan([Call("taobao_search_products", {"keyword": "2026款 特斯拉 Model Y"}), Say("淘宝上搜索不到。")],
                     failure="premature_give_up", note="stops at the empty result"),
    "B2-FR-02": Plan([Call("search_flights", {"origin": "广州", "destination": "北京"}),
                      Say("查询失败：缺少必填参数 date。")],
                     failure="premature_give_up", note="relays the error and stops"),
    "B2-FR-03": Plan([Call("maps_weather", {"city": "故宫"}), Call("maps_weather", {"city": "故宫"}),
                      Call("maps_weather", {"city": "故宫", "date": DateOf("明天")}),
                      Say("天气服务出错了，查不到故宫的天气。")],
                     failure="retry_loop", note="keeps 故宫 as the city and fails again and again"),
    "B2-FR-04": Plan([Calls((Call("search_flights", {"origin": "上海", "destination": "巴厘岛"}),
                             Call("maps_weather", {"city": "巴厘岛"}))),
                      Say("上海到巴厘岛的机票：{search_flights:flights[0].flight_no} ¥{search_flights:flights[0].price_cny}。")],
                     failure="silent_partial_failure", note="answers the flights and says nothing about the weather"),
    "B2-FR-05": Plan([Say("好的，请问您从哪里出发？")],
                     failure="lost_context", note="asks for the origin again"),
    "B2-MM-01": Plan([Say("请先用文字描述一下这双鞋的品牌、型号和颜色，我再帮你搜。")],
                     failure="ignored_image", note="asks the user to describe the picture"),
    "B2-MM-02": Plan([Say("这个价格看起来挺正常的，可以放心购买。")],
                     failure="ignored_image", note="judges the price without reading it or searching"),
    "B2-MM-03": Plan([Call("taobao_search_by_image", {"image_url": "uploaded://map_screenshot.png"}),
                      Say("识别到图片中的商品。")],
                     failure="wrong_tool", note="image search for a map screenshot"),
    "B2-MM-04": Plan([Say("这款耳机淘宝价大约 2299 元，评价普遍很好，好评率 98%。")],
                     failure="fabrication", note="invents price and reviews without any call"),
    "B2-MM-05": Plan([Say("这是 Apple AirPods Pro 2，淘宝 Apple 官方旗舰店有售，¥1799。")],
                     failure="fabrication", note="claims to recognize the blurred product"),
}
