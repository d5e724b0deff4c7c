-- TPC-C's consistency conditions 1 to 4 (clause 3.3.2): one row per condition that
-- does not hold, naming it and how many warehouses or districts break it.
SELECT '1 (W_YTD = sum(D_YTD)): ' || count(*) || CASE count(*) WHEN 1 THEN ' warehouse differs' ELSE ' warehouses differ' END
FROM warehouse WHERE w_ytd <> (SELECT sum(d_ytd) FROM district WHERE d_w_id = w_id)
HAVING count(*) > 0
UNION ALL
SELECT '2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)): ' || count(*) || CASE count(*) WHEN 1 THEN ' district differs' ELSE ' districts differ' END
FROM district
WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id)
    OR d_next_o_id - 1 <> coalesce((SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id),
        d_next_o_id - 1)
HAVING count(*) > 0
UNION ALL
SELECT '3 (max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER): ' || count(*) || CASE count(*) WHEN 1 THEN ' district differs' ELSE ' districts differ' END
FROM (SELECT max(no_o_id) - min(no_o_id) + 1 <> count(*) AS differs FROM new_order GROUP BY no_w_id, no_d_id) n
WHERE differs
HAVING count(*) > 0
UNION ALL
SELECT '4 (sum(O_OL_CNT) = rows in ORDER-LINE): ' || count(*) || CASE count(*) WHEN 1 THEN ' district differs' ELSE ' districts differ' END
FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS lines FROM orders GROUP BY 1, 2) o
FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) AS lines FROM order_line GROUP BY 1, 2) ol
    ON ol_w_id = o_w_id AND ol_d_id = o_d_id
WHERE o.lines IS DISTINCT FROM ol.lines
HAVING count(*) > 0;
