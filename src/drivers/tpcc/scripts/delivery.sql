-- pgbench: a delivery of warehouse :w's oldest undelivered orders.
SELECT tpcc_delivery(:w);
