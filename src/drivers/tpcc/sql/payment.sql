-- The payment transaction (clause 2.5) for home warehouse w among n: 15% of payments
-- are for a customer of another warehouse. Returns 1; never raises on the data.
CREATE FUNCTION tpcc_payment(w integer, n integer, c_id_c integer, c_last_c integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    d integer := 1 + floor(random() * 10)::integer;
    remote boolean := n > 1 AND random() < 0.15;
    c_w integer := CASE WHEN remote THEN tpcc_other(w, n) ELSE w END;
    c_d integer := CASE WHEN remote THEN 1 + floor(random() * 10)::integer ELSE d END;
    amount numeric := round((1 + random() * 4999)::numeric, 2);
    c integer;
    name_w text;
    name_d text;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + amount WHERE w_id = w RETURNING w_name INTO name_w;
    UPDATE district SET d_ytd = d_ytd + amount WHERE d_w_id = w AND d_id = d RETURNING d_name INTO name_d;
    c := tpcc_customer(c_w, c_d, c_id_c, c_last_c);
    UPDATE customer SET c_balance = c_balance - amount, c_ytd_payment = c_ytd_payment + amount,
        c_payment_cnt = c_payment_cnt + 1,
        c_data = CASE WHEN c_credit = 'BC'
            THEN left(format('%s %s %s %s %s %s | %s', c, c_d, c_w, d, w, amount, c_data), 500)
            ELSE c_data END
    WHERE c_w_id = c_w AND c_d_id = c_d AND c_id = c;
    INSERT INTO history VALUES (c, c_d, c_w, d, w, now(), amount, name_w || '    ' || name_d);
    RETURN 1;
END;
$$;
