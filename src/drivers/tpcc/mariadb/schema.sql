-- The nine TPC-C tables (clause 1.3) in InnoDB, keyed as on PostgreSQL (its primary keys
-- and HammerDB's two secondary indexes), and fathom's table of the load's NURand
-- constants (clause 2.1.6). Loaded in key order, the keys cost little during the load.
CREATE TABLE warehouse (
    w_id integer NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
    w_city varchar(20), w_state char(2), w_zip char(9), w_tax decimal(4,4), w_ytd decimal(12,2),
    PRIMARY KEY (w_id)
) ENGINE = InnoDB;
CREATE TABLE district (
    d_id smallint NOT NULL, d_w_id integer NOT NULL, d_name varchar(10), d_street_1 varchar(20),
    d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,4),
    d_ytd decimal(12,2), d_next_o_id integer,
    PRIMARY KEY (d_w_id, d_id)
) ENGINE = InnoDB;
CREATE TABLE customer (
    c_id integer NOT NULL, c_d_id smallint NOT NULL, c_w_id integer NOT NULL, c_first varchar(16),
    c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20),
    c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since datetime,
    c_credit char(2), c_credit_lim decimal(12,2), c_discount decimal(4,4), c_balance decimal(12,2),
    c_ytd_payment decimal(12,2), c_payment_cnt integer, c_delivery_cnt integer, c_data varchar(500),
    PRIMARY KEY (c_w_id, c_d_id, c_id),
    UNIQUE KEY customer_i2 (c_w_id, c_d_id, c_last, c_first, c_id)
) ENGINE = InnoDB;
CREATE TABLE history (
    h_c_id integer, h_c_d_id smallint, h_c_w_id integer, h_d_id smallint, h_w_id integer,
    h_date datetime, h_amount decimal(6,2), h_data varchar(24)
) ENGINE = InnoDB;
CREATE TABLE new_order (
    no_o_id integer NOT NULL, no_d_id smallint NOT NULL, no_w_id integer NOT NULL,
    PRIMARY KEY (no_w_id, no_d_id, no_o_id)
) ENGINE = InnoDB;
CREATE TABLE orders (
    o_id integer NOT NULL, o_d_id smallint NOT NULL, o_w_id integer NOT NULL, o_c_id integer,
    o_entry_d datetime, o_carrier_id smallint, o_ol_cnt smallint, o_all_local smallint,
    PRIMARY KEY (o_w_id, o_d_id, o_id),
    UNIQUE KEY orders_i2 (o_w_id, o_d_id, o_c_id, o_id)
) ENGINE = InnoDB;
CREATE TABLE order_line (
    ol_o_id integer NOT NULL, ol_d_id smallint NOT NULL, ol_w_id integer NOT NULL, ol_number smallint NOT NULL,
    ol_i_id integer, ol_supply_w_id integer, ol_delivery_d datetime, ol_quantity smallint,
    ol_amount decimal(6,2), ol_dist_info char(24),
    PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
) ENGINE = InnoDB;
CREATE TABLE item (
    i_id integer NOT NULL, i_im_id integer, i_name varchar(24), i_price decimal(5,2), i_data varchar(50),
    PRIMARY KEY (i_id)
) ENGINE = InnoDB;
CREATE TABLE stock (
    s_i_id integer NOT NULL, s_w_id integer NOT NULL, s_quantity smallint,
    s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
    s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24),
    s_ytd integer, s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50),
    PRIMARY KEY (s_w_id, s_i_id)
) ENGINE = InnoDB;
CREATE TABLE tpcc_load (warehouses integer NOT NULL, c_last integer NOT NULL) ENGINE = InnoDB;
