-- pgbench: a payment to warehouse :w.
SELECT tpcc_payment(:w, :warehouses, :c_id, :c_last);
