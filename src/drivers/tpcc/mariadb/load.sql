-- The population of clause 4.3.3.1, computed in the server from MariaDB's sequence
-- tables (seq_1_to_N), so no data crosses from the client: the items once, and each
-- warehouse's stock, and its districts with their customers, history and orders, each a
-- call of its own so that sessions load them in parallel. Random strings are written out
-- where they are drawn (LEFT(MD5(RAND()), n)): a stored function's call would triple a
-- row's cost. Run by the mariadb client, whose DELIMITER lets a body hold semicolons.
DELIMITER //

-- A string holding "ORIGINAL" at a random place in 10% of cases.
CREATE FUNCTION tpcc_original(s varchar(512)) RETURNS varchar(512) NOT DETERMINISTIC NO SQL
RETURN IF(RAND() < 0.1, INSERT(s, 1 + FLOOR(RAND() * (CHAR_LENGTH(s) - 7)), 8, 'ORIGINAL'), s)//

-- NURand(A, x, y) with constant c (clause 2.1.6).
CREATE FUNCTION tpcc_nurand(a integer, x integer, y integer, c integer) RETURNS integer NOT DETERMINISTIC NO SQL
RETURN (((FLOOR(RAND() * (a + 1)) | (x + FLOOR(RAND() * (y - x + 1)))) + c) % (y - x + 1)) + x//

-- A last name from the three syllables of a number between 0 and 999 (clause 4.3.2.3).
CREATE FUNCTION tpcc_last_name(n integer) RETURNS varchar(16) DETERMINISTIC NO SQL
RETURN CONCAT(
    ELT(n DIV 100 + 1, 'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY', 'ATION', 'EING'),
    ELT(n DIV 10 % 10 + 1, 'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY', 'ATION', 'EING'),
    ELT(n % 10 + 1, 'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY', 'ATION', 'EING'))//

CREATE PROCEDURE tpcc_load_items()
BEGIN
    INSERT INTO item
    SELECT seq, 1 + FLOOR(RAND() * 10000), LEFT(MD5(RAND()), 14 + FLOOR(RAND() * 11)), ROUND(1 + RAND() * 99, 2),
        tpcc_original(LEFT(REPEAT(MD5(RAND()), 2), 26 + FLOOR(RAND() * 25)))
    FROM seq_1_to_100000;
END//

CREATE PROCEDURE tpcc_load_stock(w integer)
BEGIN
    INSERT INTO stock
    SELECT seq, w, 10 + FLOOR(RAND() * 91), LEFT(MD5(RAND()), 24), LEFT(MD5(RAND()), 24), LEFT(MD5(RAND()), 24),
        LEFT(MD5(RAND()), 24), LEFT(MD5(RAND()), 24), LEFT(MD5(RAND()), 24), LEFT(MD5(RAND()), 24),
        LEFT(MD5(RAND()), 24), LEFT(MD5(RAND()), 24), LEFT(MD5(RAND()), 24), 0, 0, 0,
        tpcc_original(LEFT(REPEAT(MD5(RAND()), 2), 26 + FLOOR(RAND() * 25)))
    FROM seq_1_to_100000;
END//

CREATE PROCEDURE tpcc_load_warehouse(w integer, c_last_c integer)
BEGIN
    INSERT INTO warehouse VALUES (w, LEFT(MD5(RAND()), 6 + FLOOR(RAND() * 5)),
        LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)), LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)),
        LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)), LEFT(MD5(RAND()), 2),
        CONCAT(LPAD(FLOOR(RAND() * 1e4), 4, '0'), '11111'), ROUND(RAND() * 0.2, 4), 300000);
    INSERT INTO district
    SELECT seq, w, LEFT(MD5(RAND()), 6 + FLOOR(RAND() * 5)), LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)),
        LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)), LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)), LEFT(MD5(RAND()), 2),
        CONCAT(LPAD(FLOOR(RAND() * 1e4), 4, '0'), '11111'), ROUND(RAND() * 0.2, 4), 30000, 3001
    FROM seq_1_to_10;
    -- the first 1000 customers of a district take the 1000 names in turn, the others
    -- a name drawn with NURand and the load's constant
    INSERT INTO customer
    SELECT c.seq, d.seq, w, LEFT(MD5(RAND()), 8 + FLOOR(RAND() * 9)), 'OE',
        tpcc_last_name(IF(c.seq <= 1000, c.seq - 1, tpcc_nurand(255, 0, 999, c_last_c))),
        LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)), LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)),
        LEFT(MD5(RAND()), 10 + FLOOR(RAND() * 11)), LEFT(MD5(RAND()), 2), CONCAT(LPAD(FLOOR(RAND() * 1e4), 4, '0'), '11111'),
        LPAD(FLOOR(RAND() * 1e16), 16, '0'), NOW(), IF(RAND() < 0.1, 'BC', 'GC'),
        50000, ROUND(RAND() * 0.5, 4), -10, 10, 1, 0, LEFT(REPEAT(MD5(RAND()), 16), 300 + FLOOR(RAND() * 201))
    FROM seq_1_to_10 d, seq_1_to_3000 c ORDER BY d.seq, c.seq;
    INSERT INTO history
    SELECT c.seq, d.seq, w, d.seq, w, NOW(), 10, LEFT(MD5(RAND()), 12 + FLOOR(RAND() * 13))
    FROM seq_1_to_10 d, seq_1_to_3000 c;
    -- each district's orders are for its customers in a random order; the last 900
    -- are not delivered yet
    INSERT INTO orders
    SELECT o, d, w, c, NOW(), IF(o < 2101, 1 + FLOOR(RAND() * 10), NULL), 5 + FLOOR(RAND() * 11), 1
    FROM (SELECT d.seq AS d, c.seq AS c, ROW_NUMBER() OVER (PARTITION BY d.seq ORDER BY RAND()) AS o
          FROM seq_1_to_10 d, seq_1_to_3000 c) permuted
    ORDER BY d, o;
    INSERT INTO order_line
    SELECT o_id, o_d_id, w, n.seq, 1 + FLOOR(RAND() * 100000), w, IF(o_id < 2101, o_entry_d, NULL), 5,
        IF(o_id < 2101, 0, ROUND(0.01 + RAND() * 9999.98, 2)), LEFT(MD5(RAND()), 24)
    FROM orders JOIN seq_1_to_15 n ON n.seq <= o_ol_cnt
    WHERE o_w_id = w ORDER BY o_d_id, o_id, n.seq;
    INSERT INTO new_order SELECT o.seq, d.seq, w FROM seq_1_to_10 d, seq_2101_to_3000 o;
END//

DELIMITER ;
