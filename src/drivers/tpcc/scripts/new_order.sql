-- pgbench: a new-order for warehouse :w, rolled back when the function says its order
-- held an unused item.
BEGIN;
SELECT tpcc_new_order(:w, :warehouses, :c_id, :ol_i_id) AS committed \gset
\if :committed
COMMIT;
\else
ROLLBACK;
\endif
