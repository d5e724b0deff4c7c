-- The stock-level transaction (clause 2.8) for warehouse w and district d: how many
-- distinct items of its last 20 orders have less stock than a threshold of 10 to 20.
CREATE FUNCTION tpcc_stock_level(w integer, d integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    threshold integer := 10 + floor(random() * 11)::integer;
    next_o integer;
    low integer;
BEGIN
    SELECT d_next_o_id INTO next_o FROM district WHERE d_w_id = w AND d_id = d;
    SELECT count(DISTINCT s_i_id) INTO low
    FROM order_line JOIN stock ON s_w_id = w AND s_i_id = ol_i_id
    WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id >= next_o - 20 AND ol_o_id < next_o AND s_quantity < threshold;
    RETURN low;
END;
$$;
