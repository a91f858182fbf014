"""One traffic world: every fact the expressway (한국도로공사) and TAGO tools show on two tools agrees, over all rows.

Read from the world as the tools serve it: each tool's rows come from its operation's `x-kopa.source` table or view
(looked up by tool name in the specs, so a renamed view is followed), joined on the keys the tools share.

Expressway: every tollgate and every rest area stands in a 시군구 its route really passes (`ex_routes.sggs`, the
real routes' 시군구 in order, or the known 경부선 tollgates' districts), the rest area's address names that
district, its direction is one of the route's two ends and its name says it; its foods and fuel prices carry its
own code, name, route and direction, with no dish twice and no regional dish outside its 시도; unit codes and
names, route numbers and names agree on every tool; a route's hourly traffic is the sum of its tollgates', the
network's the sum of all.

TAGO: a stop stands in a district of its city and has one city, name, number and position on the stop list, the
route-stop list, the stop-route list, the arrival list and the bus positions; a route's stops belong to its city,
numbered 1..n, its first stop is its 기점; the routes through a stop are exactly the routes that list it."""

from __future__ import annotations

import sqlite3
from collections import defaultdict

import pytest

from kopa_gen.project import Project


@pytest.fixture(scope="module")
def db(world_db: sqlite3.Connection) -> sqlite3.Connection:
    return world_db


@pytest.fixture(scope="module")
def src(project: Project) -> dict[str, str]:
    """Tool name -> the world table or view its rows are served from."""
    out = {}
    for pid in ("expressway", "tago"):
        for op in project.platform(pid).operations:
            assert op.kopa.source is not None, op.tool
            out[op.tool] = op.kopa.source.table
    return out


def _rows(db: sqlite3.Connection, sql: str, *args: object) -> list[tuple]:
    return db.execute(sql, args).fetchall()


def _route_districts(db: sqlite3.Connection) -> dict[str, list[str]]:
    """Route number -> the 시군구 prefixes it passes, in order."""
    out: dict[str, list[str]] = {}
    for route, sggs in _rows(db, "SELECT routeNo, sggs FROM ex_routes"):
        out[route] = sggs.split()
    for route, prefix in _rows(db, "SELECT routeNo, prefix FROM ex_unit_known ORDER BY routeNo, seq"):
        if prefix not in out[route]:
            out[route].append(prefix)
    return out


def _on_route(region_cd: str, prefixes: list[str]) -> int | None:
    """The place of region_cd's 시군구 in the route's list, None when the route does not pass it."""
    return next((k for k, p in enumerate(prefixes) if region_cd.startswith(p)), None)


# --- expressway -------------------------------------------------------------------------------------------------


def test_every_route_names_current_districts_in_order(db: sqlite3.Connection) -> None:
    routes = _route_districts(db)
    assert len(routes) >= 25 and all(routes.values())
    current = {r[0][:5] for r in _rows(db, "SELECT region_cd FROM regions WHERE abolished = 0")}
    for route, prefixes in routes.items():
        assert len(set(prefixes)) == len(prefixes), route
        for p in prefixes:
            assert len(p) == 5 and p in current, (route, p)
            leaves = db.execute(
                "SELECT count(*) FROM juso_districts WHERE substr(region_cd, 1, 5) = ?", (p,)
            ).fetchone()[0]
            assert leaves > 0, (route, p)
    # the documented ends of the two routes the world was first wrong about
    assert routes["0150"][0] == "11545" and routes["0150"][-1] == "46110"  # 서해안선: 서울 금천 ... 목포
    assert routes["0500"][0].startswith("28") and routes["0500"][-1] == "51150"  # 영동선: 인천 ... 강릉


def test_every_tollgate_stands_on_its_route_in_order(db: sqlite3.Connection, src: dict[str, str]) -> None:
    routes = _route_districts(db)
    tollgates = _rows(
        db,
        f'SELECT t.unitCode, t.routeNo, u.region_cd, u.seq FROM "{src["expressway_list_tollgates"]}" t '
        "JOIN ex_units u ON u.unitCode = t.unitCode ORDER BY t.routeNo, u.seq",
    )
    assert len(tollgates) >= 350
    last: dict[str, int] = {}
    for code, route, region_cd, _ in tollgates:
        place = _on_route(region_cd, routes[route])
        assert place is not None, f"tollgate {code} of route {route} stands in {region_cd}, off the route"
        if route != "0010":  # the known 경부선 tollgates keep their real order, some 시군구 twice
            assert place >= last.get(route, 0), f"tollgate {code} goes back along route {route}"
            last[route] = place


def test_every_rest_area_lies_where_its_route_passes_and_says_so(
    db: sqlite3.Connection, src: dict[str, str]
) -> None:
    routes = _route_districts(db)
    ends = {r: (a, b) for r, a, b in _rows(db, "SELECT routeNo, dir_a, dir_b FROM ex_routes")}
    district = {
        name: code for code, name in _rows(db, "SELECT region_cd, name FROM regions WHERE abolished = 0")
    }
    areas = _rows(
        db,
        f"""SELECT l.serviceAreaCode, l.stdRestCd, l.unitName, l.routeNo, l.routeName, i.svarNm, i.routeCd, i.routeNm,
                   i.gudClssNm, i.svarAddr, o.serviceAreaName, o.routeCode, o.routeName, o.direction, o.svarAddr
            FROM "{src["expressway_list_rest_areas"]}" l
            JOIN "{src["expressway_list_rest_area_addresses"]}" i ON i.svarCd = l.stdRestCd
            JOIN "{src["expressway_list_fuel_prices"]}" o ON o.serviceAreaCode = l.serviceAreaCode""",
    )
    total = db.execute(f'SELECT count(*) FROM "{src["expressway_list_rest_areas"]}"').fetchone()[0]
    assert len(areas) == total >= 150
    problems = []
    for code, _std, name, route, route_name, *shown in areas:
        info_name, info_route, info_route_name, direction, address, oil_name, oil_route, oil_route_name = (
            shown[:8]
        )
        oil_direction, oil_address = shown[8:]
        if (info_name, oil_name) != (name, name) or {info_route, oil_route} != {route}:
            problems.append(f"{code}: name or route differs between tools ({name}, {info_name}, {oil_name})")
        if {info_route_name, oil_route_name} != {route_name}:
            problems.append(f"{code}: route name differs between tools")
        if oil_direction != direction or oil_address != address:
            problems.append(f"{code}: direction or address differs between tools")
        if direction not in ends[route] or not name.endswith(f"({direction})휴게소"):
            problems.append(f"{code}: {name} serves {direction}, the route runs {ends[route]}")
        place, lot = address.rsplit(" ", 1)
        region_cd = district.get(place)
        if region_cd is None or not lot.isdigit():
            problems.append(f"{code}: address {address!r} names no current legal district")
        elif _on_route(region_cd, routes[route]) is None:
            problems.append(f"{code}: {name} of {route_name} at {address}, a 시군구 the route does not pass")
    assert problems == []


def test_rest_area_foods_belong_to_their_rest_area(db: sqlite3.Connection, src: dict[str, str]) -> None:
    areas = {
        r[0]: r[1:]
        for r in _rows(
            db,
            f"""SELECT l.serviceAreaCode, l.stdRestCd, l.unitName, l.routeNo, l.routeName, i.gudClssNm
                FROM "{src["expressway_list_rest_areas"]}" l
                JOIN "{src["expressway_list_rest_area_addresses"]}" i ON i.svarCd = l.stdRestCd""",
        )
    }
    sido = {
        code: region[:2] for code, region in _rows(db, "SELECT serviceAreaCode, region_cd FROM ex_rest_areas")
    }
    regional = dict(_rows(db, "SELECT batchMenu, region FROM ex_menus WHERE region != ''"))
    assert regional
    foods = _rows(
        db,
        f"""SELECT serviceAreaCode, serviceAreaCode2, serviceAreaName, routeCode, routeName, direction, batchMenu,
                   food_no FROM "{src["expressway_list_rest_area_foods"]}" ORDER BY serviceAreaCode, food_no""",
    )
    served: dict[str, list[str]] = defaultdict(list)
    for code, *shown, dish, _ in foods:
        assert code in areas, f"a food of {code}, which no rest area has"
        assert tuple(shown) == areas[code], (code, shown, areas[code])
        assert dish not in regional or regional[dish] == sido[code], (
            f"{dish} served at {code} in 시도 {sido[code]}"
        )
        served[code].append(dish)
    assert set(served) == set(areas)  # every rest area has its foods
    for code, dishes in served.items():
        assert 1 <= len(dishes) <= 4 and len(set(dishes)) == len(dishes), (code, dishes)


def test_unit_codes_names_and_routes_agree_on_every_tool(db: sqlite3.Connection, src: dict[str, str]) -> None:
    names = dict(_rows(db, "SELECT routeNo, routeName FROM ex_routes"))
    assert len(set(names.values())) == len(names)  # one name per number, one number per name
    pairs = {
        "expressway_list_tollgates": ("routeNo", "routeName"),
        "expressway_list_rest_areas": ("routeNo", "routeName"),
        "expressway_list_rest_area_addresses": ("routeCd", "routeNm"),
        "expressway_list_rest_area_foods": ("routeCode", "routeName"),
        "expressway_list_fuel_prices": ("routeCode", "routeName"),
        "expressway_list_route_traffic": ("routeNo", "routeName"),
    }
    for tool, (number, name) in pairs.items():
        shown = _rows(db, f'SELECT DISTINCT "{number}", "{name}" FROM "{src[tool]}"')
        assert shown and all(names.get(n) == m for n, m in shown), (
            tool,
            [p for p in shown if names.get(p[0]) != p[1]],
        )

    units = {
        c: (n, r)
        for c, n, r in _rows(
            db, f'SELECT unitCode, unitName, routeNo FROM "{src["expressway_list_tollgates"]}"'
        )
    }
    assert len({n for n, _ in units.values()}) == len(units)  # a tollgate's name finds one tollgate
    traffic = _rows(
        db, f'SELECT DISTINCT unit_cd, unitCode, unitName FROM "{src["expressway_list_tollgate_traffic"]}"'
    )
    assert {t[0] for t in traffic} == set(units)
    for trimmed, sent, name in traffic:
        assert sent == trimmed + " " and units[trimmed][0] == name, (trimmed, sent, name)
    times = _rows(
        db,
        f"""SELECT DISTINCT iStartUnitCode, startUnitCode, startUnitNm, iEndUnitCode, endUnitCode, endUnitNm
            FROM "{src["expressway_list_travel_times"]}" """,
    )
    assert len(times) > len(units)
    for start, start_sent, start_name, end, end_sent, end_name in times:
        assert (start_sent, end_sent) == (start + " ", end + " ")
        assert (units[start][0], units[end][0]) == (start_name, end_name)
        assert units[start][1] == units[end][1], f"travel time {start}->{end} joins two routes"


def test_route_and_network_traffic_are_the_sums_of_the_tollgates(
    db: sqlite3.Connection, src: dict[str, str]
) -> None:
    per_ic = src["expressway_list_tollgate_traffic"]
    units = src["expressway_list_tollgates"]
    summed = {
        (r, d, h): n
        for r, d, h, n in _rows(
            db,
            f"""SELECT u.routeNo, t.sumDate, t.sumTm, sum(t.trafficAmout) FROM "{per_ic}" t
                JOIN "{units}" u ON u.unitCode = t.unit_cd WHERE t.inoutType = '0'
                GROUP BY u.routeNo, t.sumDate, t.sumTm""",
        )
    }
    route = {
        (r, d, h): n
        for r, d, h, n in _rows(
            db, f'SELECT routeNo, sumDate, sumTm, trafficAmout FROM "{src["expressway_list_route_traffic"]}"'
        )
    }
    assert len(route) >= 25 * 3 * 24 and route == summed
    network = dict(
        ((d, h), n)
        for d, h, n in _rows(
            db, f'SELECT sumDate, sumTm, trafficAmout FROM "{src["expressway_list_total_traffic"]}"'
        )
    )
    by_hour: dict[tuple[str, str], int] = defaultdict(int)
    for (_, d, h), n in route.items():
        by_hour[(d, h)] += n
    assert len(network) == 3 * 24 and network == by_hour


# --- TAGO -------------------------------------------------------------------------------------------------------


def test_every_stop_stands_in_a_district_of_its_city(db: sqlite3.Connection, src: dict[str, str]) -> None:
    stops = src["tago_list_stops"]
    cities = dict(_rows(db, f'SELECT citycode, cityname FROM "{src["tago_list_city_codes"]}"'))
    wrong = _rows(
        db,
        f"""SELECT s.nodeid, s.citycode, t.region_cd FROM "{stops}" s JOIN tago_stops t ON t.nodeid = s.nodeid
            JOIN tago_cities c ON c.citycode = s.citycode
            WHERE substr(t.region_cd, 1, length(c.region_a)) != c.region_a
              AND (c.region_b = '' OR substr(t.region_cd, 1, length(c.region_b)) != c.region_b)
            LIMIT 5""",
    )
    assert wrong == []
    total, ids, stray = db.execute(
        f"""SELECT count(*), count(DISTINCT nodeid), sum(citycode NOT IN (SELECT citycode FROM tago_cities))
            FROM "{stops}" """
    ).fetchone()
    assert total == ids > 40_000 and stray == 0 and len(cities) >= 30
    # the stop is named after its 동/리 (the stem of its legal district's name)
    unnamed = _rows(
        db,
        """SELECT s.nodeid, s.nodenm, r.low_name FROM tago_stops s JOIN regions r ON r.region_cd = s.region_cd
           WHERE r.abolished = 0 AND instr(s.nodenm, CASE WHEN length(r.low_name) > 2 AND substr(r.low_name, -1)
             IN ('동', '리') THEN substr(r.low_name, 1, length(r.low_name) - 1) ELSE r.low_name END) != 1
           LIMIT 5""",
    )
    assert unnamed == []
    gone = db.execute(
        "SELECT count(*) FROM tago_stops s LEFT JOIN regions r ON r.region_cd = s.region_cd AND r.abolished = 0 "
        "WHERE r.region_cd IS NULL"
    ).fetchone()[0]
    assert gone == 0


def test_a_stop_is_the_same_stop_on_every_list(db: sqlite3.Connection, src: dict[str, str]) -> None:
    stops = src["tago_list_stops"]
    route_stops = src["tago_list_route_stops"]
    checks = {
        "route stops": f"""SELECT count(*) FROM "{route_stops}" p LEFT JOIN "{stops}" s ON s.nodeid = p.nodeid
            WHERE s.nodeid IS NULL OR s.citycode != p.citycode OR s.nodenm != p.nodenm OR s.nodeno != p.nodeno
               OR s.gpslati != p.gpslati OR s.gpslong != p.gpslong""",
        "arrivals": f"""SELECT count(*) FROM "{src["tago_list_stop_arrivals"]}" a LEFT JOIN "{stops}" s
            ON s.nodeid = a.nodeid WHERE s.nodeid IS NULL OR s.citycode != a.citycode OR s.nodenm != a.nodenm""",
        "stop routes": f"""SELECT count(*) FROM "{src["tago_list_stop_routes"]}" t LEFT JOIN "{stops}" s
            ON s.nodeid = t.nodeid WHERE s.nodeid IS NULL OR s.citycode != t.citycode""",
        "bus positions": f"""SELECT count(*) FROM "{src["tago_list_route_bus_locations"]}" b LEFT JOIN "{stops}" s
            ON s.nodeid = b.nodeid WHERE s.nodeid IS NULL OR s.citycode != b.citycode OR s.nodenm != b.nodenm
               OR s.gpslati != b.gpslati OR s.gpslong != b.gpslong""",
    }
    counts = {name: db.execute(sql).fetchone()[0] for name, sql in checks.items()}
    assert counts == dict.fromkeys(checks, 0)
    assert db.execute(f'SELECT count(*) FROM "{route_stops}"').fetchone()[0] > 100_000


def test_a_routes_stops_belong_to_its_city_in_order(db: sqlite3.Connection, src: dict[str, str]) -> None:
    routes = src["tago_list_routes"]
    route_stops = src["tago_list_route_stops"]
    foreign = db.execute(
        f"""SELECT count(*) FROM "{route_stops}" p LEFT JOIN "{routes}" r ON r.routeid = p.routeid
            WHERE r.routeid IS NULL OR r.citycode != p.citycode"""
    ).fetchone()[0]
    assert foreign == 0
    gaps = _rows(
        db,
        f"""SELECT routeid, count(*), count(DISTINCT nodeord), min(nodeord), max(nodeord) FROM "{route_stops}"
            GROUP BY routeid HAVING count(*) != max(nodeord) OR count(DISTINCT nodeord) != count(*) OR min(nodeord) != 1
            LIMIT 5""",
    )
    assert gaps == []
    n_routes, with_stops = db.execute(
        f'SELECT count(*), sum(routeid IN (SELECT routeid FROM "{route_stops}")) FROM "{routes}"'
    ).fetchone()
    assert n_routes == with_stops > 1000
    first = db.execute(
        f"""SELECT count(*) FROM "{routes}" r JOIN "{route_stops}" p ON p.routeid = r.routeid AND p.nodeord = 1
            WHERE p.nodenm != r.startnodenm"""
    ).fetchone()[0]
    assert first == 0
    info = src["tago_get_route_info"]
    differs = db.execute(
        f"""SELECT count(*) FROM "{routes}" r LEFT JOIN "{info}" i ON i.routeid = r.routeid
            WHERE i.routeid IS NULL OR i.citycode != r.citycode OR i.routeno != r.routeno OR i.routetp != r.routetp
               OR i.startnodenm != r.startnodenm OR i.endnodenm != r.endnodenm"""
    ).fetchone()[0]
    assert differs == 0


def test_the_routes_through_a_stop_are_the_routes_that_list_it(
    db: sqlite3.Connection, src: dict[str, str]
) -> None:
    routes = src["tago_list_routes"]
    through = src["tago_list_stop_routes"]
    listed = set(_rows(db, f'SELECT DISTINCT nodeid, routeid FROM "{src["tago_list_route_stops"]}"'))
    served = _rows(db, f'SELECT nodeid, routeid FROM "{through}"')
    assert len(served) == len(set(served)) and set(served) == listed
    differs = db.execute(
        f"""SELECT count(*) FROM "{through}" t JOIN "{routes}" r ON r.routeid = t.routeid
            WHERE r.citycode != t.citycode OR r.routeno != t.routeno OR r.routetp != t.routetp
               OR r.startnodenm != t.startnodenm OR r.endnodenm != t.endnodenm"""
    ).fetchone()[0]
    assert differs == 0


def test_arrivals_and_buses_run_on_their_routes(db: sqlite3.Connection, src: dict[str, str]) -> None:
    routes = src["tago_list_routes"]
    route_stops = src["tago_list_route_stops"]
    for tool in ("tago_list_stop_arrivals", "tago_list_stop_route_arrivals"):
        off = db.execute(
            f"""SELECT count(*) FROM "{src[tool]}" a
                LEFT JOIN "{route_stops}" p ON p.routeid = a.routeid AND p.nodeord = a.nodeord AND p.nodeid = a.nodeid
                LEFT JOIN "{routes}" r ON r.routeid = a.routeid
                WHERE p.routeid IS NULL OR r.routeid IS NULL OR r.routeno != a.routeno OR r.routetp != a.routetp
                   OR r.citycode != a.citycode OR a.arrprevstationcnt < 1 OR a.arrprevstationcnt >= a.nodeord""",
        ).fetchone()[0]
        assert off == 0, tool
    buses = src["tago_list_route_bus_locations"]
    off = db.execute(
        f"""SELECT count(*) FROM "{buses}" b
            LEFT JOIN "{route_stops}" p ON p.routeid = b.routeid AND p.nodeord = b.nodeord AND p.nodeid = b.nodeid
            LEFT JOIN "{routes}" r ON r.routeid = b.routeid
            WHERE p.routeid IS NULL OR r.routeid IS NULL OR r.routeno != b.routenm OR r.routetp != b.routetp
               OR r.citycode != b.citycode"""
    ).fetchone()[0]
    assert off == 0
    plates = _rows(
        db,
        f"""SELECT DISTINCT b.vehicleno, c.plate FROM "{buses}" b JOIN tago_cities c ON c.citycode = b.citycode
            WHERE substr(b.vehicleno, 1, length(c.plate)) != c.plate LIMIT 5""",
    )
    assert plates == []
