-- pgbench: the low stock of the client's district of warehouse :w (TPC-C fixes a
-- terminal's district for it).
\set d :client_id % 10 + 1
SELECT tpcc_stock_level(:w, :d);
