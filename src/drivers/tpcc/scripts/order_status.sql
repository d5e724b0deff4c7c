-- pgbench: the status of a customer's last order in warehouse :w.
SELECT tpcc_order_status(:w, :c_id, :c_last);
