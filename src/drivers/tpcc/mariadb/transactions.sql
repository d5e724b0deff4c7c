-- TPC-C's five transactions as stored procedures, each one round trip that commits or
-- rolls back itself (as HammerDB's are on MariaDB). The client draws their random
-- inputs (tpcc.lua); a procedure returns no result set, so one CALL is one reply.
DELIMITER //

-- The customer a payment or an order-status is for: by id, or with id 0 the one in the
-- middle of those named `last` in its district, ordered by first name (clause 2.5.2.2).
CREATE PROCEDURE tpcc_customer(w integer, d integer, INOUT c integer, last varchar(16))
BEGIN
    DECLARE named integer;
    IF c = 0 THEN
        SELECT COUNT(*) INTO named FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = last;
        SET named = GREATEST(named - 1, 0) DIV 2;
        SELECT c_id INTO c FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = last
        ORDER BY c_first LIMIT named, 1;
    END IF;
END//

-- The new-order transaction (clause 2.4): `items`, `supply` and `qty` list its lines,
-- comma-separated, in the order of (item, supplying warehouse), so that concurrent
-- new-orders lock stock rows in one order and cannot deadlock on them; `all_local` is 1
-- when w supplies every line. An item that does not exist (1% of orders, clause
-- 2.4.1.4) rolls the order back.
CREATE PROCEDURE tpcc_new_order(w integer, d integer, c integer, items varchar(128), supply varchar(128),
    qty varchar(64), all_local integer)
BEGIN
    DECLARE line_count, k, i, s, q, o integer;
    DECLARE tax_w, tax_d, discount, price decimal(12,4);
    DECLARE stock_qty smallint;
    DECLARE dist char(24);
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET price = NULL;
    SET line_count = CHAR_LENGTH(items) - CHAR_LENGTH(REPLACE(items, ',', '')) + 1;
    START TRANSACTION;
    SELECT w_tax INTO tax_w FROM warehouse WHERE w_id = w;
    SELECT d_next_o_id, d_tax INTO o, tax_d FROM district WHERE d_w_id = w AND d_id = d FOR UPDATE;
    UPDATE district SET d_next_o_id = o + 1 WHERE d_w_id = w AND d_id = d;
    SELECT c_discount INTO discount FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = c;
    INSERT INTO orders VALUES (o, d, w, c, NOW(), NULL, line_count, all_local);
    INSERT INTO new_order VALUES (o, d, w);
    SET k = 1;
    WHILE k <= line_count DO
        SET i = SUBSTRING_INDEX(SUBSTRING_INDEX(items, ',', k), ',', -1);
        SET s = SUBSTRING_INDEX(SUBSTRING_INDEX(supply, ',', k), ',', -1);
        SET q = SUBSTRING_INDEX(SUBSTRING_INDEX(qty, ',', k), ',', -1);
        SET price = NULL;
        SELECT i_price INTO price FROM item WHERE i_id = i;
        IF price IS NULL THEN
            ROLLBACK;
            SET k = line_count + 1;
        ELSE
            SELECT s_quantity, ELT(d, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07,
                    s_dist_08, s_dist_09, s_dist_10)
            INTO stock_qty, dist FROM stock WHERE s_w_id = s AND s_i_id = i FOR UPDATE;
            UPDATE stock SET s_quantity = IF(stock_qty >= q + 10, stock_qty - q, stock_qty - q + 91),
                s_ytd = s_ytd + q, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + (s <> w)
            WHERE s_w_id = s AND s_i_id = i;
            INSERT INTO order_line VALUES (o, d, w, k, i, s, NULL, q,
                q * price * (1 + tax_w + tax_d) * (1 - discount), dist);
            SET k = k + 1;
            IF k > line_count THEN
                COMMIT;
            END IF;
        END IF;
    END WHILE;
END//

-- The payment transaction (clause 2.5): `amount` to district d of warehouse w from
-- customer c (0: by last name) of district c_d of warehouse c_w.
CREATE PROCEDURE tpcc_payment(w integer, d integer, c_w integer, c_d integer, c integer, last varchar(16),
    amount decimal(6,2))
BEGIN
    DECLARE name_w, name_d varchar(10);
    START TRANSACTION;
    UPDATE warehouse SET w_ytd = w_ytd + amount WHERE w_id = w;
    SELECT w_name INTO name_w FROM warehouse WHERE w_id = w;
    UPDATE district SET d_ytd = d_ytd + amount WHERE d_w_id = w AND d_id = d;
    SELECT d_name INTO name_d FROM district WHERE d_w_id = w AND d_id = d;
    CALL tpcc_customer(c_w, c_d, c, last);
    UPDATE customer SET c_balance = c_balance - amount, c_ytd_payment = c_ytd_payment + amount,
        c_payment_cnt = c_payment_cnt + 1,
        c_data = IF(c_credit = 'BC', LEFT(CONCAT_WS(' ', c, c_d, c_w, d, w, amount, '|', c_data), 500), c_data)
    WHERE c_w_id = c_w AND c_d_id = c_d AND c_id = c;
    INSERT INTO history VALUES (c, c_d, c_w, d, w, NOW(), amount, CONCAT(name_w, '    ', name_d));
    COMMIT;
END//

-- The order-status transaction (clause 2.6): customer c's (0: by last name) last order
-- in district d of warehouse w, and its lines.
CREATE PROCEDURE tpcc_order_status(w integer, d integer, c integer, last varchar(16))
BEGIN
    DECLARE balance decimal(12,2);
    DECLARE o, line_count integer;
    START TRANSACTION READ ONLY;
    CALL tpcc_customer(w, d, c, last);
    SELECT c_balance INTO balance FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = c;
    SELECT MAX(o_id) INTO o FROM orders WHERE o_w_id = w AND o_d_id = d AND o_c_id = c;
    SELECT COUNT(*) INTO line_count
    FROM (SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
          FROM order_line WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o) lines_read;
    COMMIT;
END//

-- The delivery transaction (clause 2.7) for warehouse w: in each of its ten districts
-- the oldest undelivered order is delivered by `carrier`, a district with none skipped.
CREATE PROCEDURE tpcc_delivery(w integer, carrier integer)
BEGIN
    DECLARE d, o, c integer;
    DECLARE total decimal(12,2);
    SET d = 1;
    START TRANSACTION;
    WHILE d <= 10 DO
        SET o = NULL;
        SELECT MIN(no_o_id) INTO o FROM new_order WHERE no_w_id = w AND no_d_id = d FOR UPDATE;
        IF o IS NOT NULL THEN
            DELETE FROM new_order WHERE no_w_id = w AND no_d_id = d AND no_o_id = o;
            SELECT o_c_id INTO c FROM orders WHERE o_w_id = w AND o_d_id = d AND o_id = o;
            UPDATE orders SET o_carrier_id = carrier WHERE o_w_id = w AND o_d_id = d AND o_id = o;
            UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
            SELECT COALESCE(SUM(ol_amount), 0) INTO total FROM order_line
            WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
            UPDATE customer SET c_balance = c_balance + total, c_delivery_cnt = c_delivery_cnt + 1
            WHERE c_w_id = w AND c_d_id = d AND c_id = c;
        END IF;
        SET d = d + 1;
    END WHILE;
    COMMIT;
END//

-- The stock-level transaction (clause 2.8): how many distinct items of district d's
-- last 20 orders have less stock than `threshold`.
CREATE PROCEDURE tpcc_stock_level(w integer, d integer, threshold integer)
BEGIN
    DECLARE next_o, low integer;
    START TRANSACTION READ ONLY;
    SELECT d_next_o_id INTO next_o FROM district WHERE d_w_id = w AND d_id = d;
    SELECT COUNT(DISTINCT s_i_id) INTO low
    FROM order_line JOIN stock ON s_w_id = w AND s_i_id = ol_i_id
    WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id >= next_o - 20 AND ol_o_id < next_o AND s_quantity < threshold;
    COMMIT;
END//

DELIMITER ;
