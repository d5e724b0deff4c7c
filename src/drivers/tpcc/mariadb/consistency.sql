-- TPC-C's consistency conditions 1 to 4 (clause 3.3.2): one row per condition that
-- does not hold, naming it and how many warehouses or districts break it.
SELECT CONCAT('1 (W_YTD = sum(D_YTD)): ', COUNT(*), IF(COUNT(*) = 1, ' warehouse differs', ' warehouses differ'))
FROM warehouse WHERE w_ytd <> (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id)
HAVING COUNT(*) > 0
UNION ALL
SELECT CONCAT('2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)): ', COUNT(*),
    IF(COUNT(*) = 1, ' district differs', ' districts differ'))
FROM district
WHERE d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id)
    OR d_next_o_id - 1 <> COALESCE((SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id),
        d_next_o_id - 1)
HAVING COUNT(*) > 0
UNION ALL
SELECT CONCAT('3 (max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER): ', COUNT(*),
    IF(COUNT(*) = 1, ' district differs', ' districts differ'))
FROM (SELECT MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) AS differs FROM new_order GROUP BY no_w_id, no_d_id) n
WHERE differs
HAVING COUNT(*) > 0
UNION ALL
SELECT CONCAT('4 (sum(O_OL_CNT) = rows in ORDER-LINE): ', COUNT(*),
    IF(COUNT(*) = 1, ' district differs', ' districts differ'))
FROM (SELECT d_w_id, d_id,
          (SELECT SUM(o_ol_cnt) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS ordered,
          (SELECT COUNT(*) FROM order_line WHERE ol_w_id = d_w_id AND ol_d_id = d_id) AS lines_held
      FROM district) o
WHERE NOT (ordered <=> lines_held)
HAVING COUNT(*) > 0;
