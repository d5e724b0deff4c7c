-- The order-status transaction (clause 2.6) for home warehouse w: a customer's last
-- order and its lines. Returns the number of lines read.
CREATE FUNCTION tpcc_order_status(w integer, c_id_c integer, c_last_c integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    d integer := 1 + floor(random() * 10)::integer;
    c integer := tpcc_customer(w, d, c_id_c, c_last_c);
    o integer;
    balance numeric;
    lines integer;
BEGIN
    SELECT c_balance INTO balance FROM customer WHERE c_w_id = w AND c_d_id = d AND c_id = c;
    SELECT o_id INTO o FROM orders WHERE o_w_id = w AND o_d_id = d AND o_c_id = c ORDER BY o_id DESC LIMIT 1;
    SELECT count(*) INTO lines
    FROM (SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
          FROM order_line WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o) lines_read;
    RETURN lines;
END;
$$;
