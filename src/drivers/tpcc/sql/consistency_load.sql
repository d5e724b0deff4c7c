-- TPC-C's consistency conditions 5 to 12 (clause 3.3.2.5-12), checked on the loaded
-- database: one row per condition that does not hold, naming it and how many rows
-- break it. Condition 11 holds only before any new-order or delivery.
WITH lines AS (
    SELECT ol_w_id, ol_d_id, ol_o_id, count(*) AS n, count(*) FILTER (WHERE ol_delivery_d IS NULL) AS undelivered,
        coalesce(sum(ol_amount) FILTER (WHERE ol_delivery_d IS NOT NULL), 0) AS delivered
    FROM order_line GROUP BY 1, 2, 3
), paid AS (
    SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) AS amount FROM history GROUP BY 1, 2, 3
), owed AS (
    SELECT o_w_id, o_d_id, o_c_id, sum(delivered) AS delivered
    FROM orders JOIN lines ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id GROUP BY 1, 2, 3
), customers AS (
    SELECT c_balance, c_ytd_payment, coalesce(owed.delivered, 0) AS delivered, coalesce(paid.amount, 0) AS paid
    FROM customer
    LEFT JOIN owed ON o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id
    LEFT JOIN paid ON h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id
)
SELECT '5 (O_CARRIER_ID null where a NEW-ORDER row is): ' || count(*) || CASE count(*) WHEN 1 THEN ' order differs' ELSE ' orders differ' END
FROM orders LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
WHERE (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)
HAVING count(*) > 0
UNION ALL
SELECT '6 (O_OL_CNT = the order''s lines): ' || count(*) || CASE count(*) WHEN 1 THEN ' order differs' ELSE ' orders differ' END
FROM orders LEFT JOIN lines ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
WHERE o_ol_cnt IS DISTINCT FROM n
HAVING count(*) > 0
UNION ALL
SELECT '7 (OL_DELIVERY_D null where O_CARRIER_ID is): ' || count(*) || CASE count(*) WHEN 1 THEN ' order differs' ELSE ' orders differ' END
FROM orders JOIN lines ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
WHERE (o_carrier_id IS NULL) <> (undelivered = n) OR undelivered NOT IN (0, n)
HAVING count(*) > 0
UNION ALL
SELECT '8 (W_YTD = sum(H_AMOUNT)): ' || count(*) || CASE count(*) WHEN 1 THEN ' warehouse differs' ELSE ' warehouses differ' END
FROM warehouse WHERE w_ytd <> (SELECT coalesce(sum(h_amount), 0) FROM history WHERE h_w_id = w_id)
HAVING count(*) > 0
UNION ALL
SELECT '9 (D_YTD = sum(H_AMOUNT)): ' || count(*) || CASE count(*) WHEN 1 THEN ' district differs' ELSE ' districts differ' END
FROM district WHERE d_ytd <> (SELECT coalesce(sum(h_amount), 0) FROM history WHERE h_w_id = d_w_id AND h_d_id = d_id)
HAVING count(*) > 0
UNION ALL
SELECT '10 (C_BALANCE = delivered OL_AMOUNT - H_AMOUNT): ' || count(*) || CASE count(*) WHEN 1 THEN ' customer differs' ELSE ' customers differ' END
FROM customers WHERE c_balance <> delivered - paid
HAVING count(*) > 0
UNION ALL
SELECT '11 (ORDER rows - NEW-ORDER rows = 2100): ' || count(*) || CASE count(*) WHEN 1 THEN ' district differs' ELSE ' districts differ' END
FROM (SELECT o_w_id, o_d_id, count(*) AS n FROM orders GROUP BY 1, 2) o
LEFT JOIN (SELECT no_w_id, no_d_id, count(*) AS n FROM new_order GROUP BY 1, 2) no
    ON no_w_id = o_w_id AND no_d_id = o_d_id
WHERE o.n - coalesce(no.n, 0) <> 2100
HAVING count(*) > 0
UNION ALL
SELECT '12 (C_BALANCE + C_YTD_PAYMENT = delivered OL_AMOUNT): ' || count(*) || CASE count(*) WHEN 1 THEN ' customer differs' ELSE ' customers differ' END
FROM customers WHERE c_balance + c_ytd_payment <> delivered
HAVING count(*) > 0;
