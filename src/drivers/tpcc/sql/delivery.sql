-- The delivery transaction (clause 2.7) for warehouse w: in each of its ten districts
-- the oldest undelivered order is delivered, a district with none skipped. Returns the
-- number of districts delivered.
CREATE FUNCTION tpcc_delivery(w integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    carrier integer := 1 + floor(random() * 10)::integer;
    delivered integer := 0;
    o integer;
    c integer;
    total numeric;
BEGIN
    FOR d IN 1 .. 10 LOOP
        DELETE FROM new_order WHERE no_w_id = w AND no_d_id = d
            AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = w AND no_d_id = d)
        RETURNING no_o_id INTO o;
        CONTINUE WHEN o IS NULL;
        UPDATE orders SET o_carrier_id = carrier WHERE o_w_id = w AND o_d_id = d AND o_id = o RETURNING o_c_id INTO c;
        WITH delivered_lines AS (
            UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o
            RETURNING ol_amount
        )
        SELECT coalesce(sum(ol_amount), 0) INTO total FROM delivered_lines;
        UPDATE customer SET c_balance = c_balance + total, c_delivery_cnt = c_delivery_cnt + 1
        WHERE c_w_id = w AND c_d_id = d AND c_id = c;
        delivered := delivered + 1;
    END LOOP;
    RETURN delivered;
END;
$$;
