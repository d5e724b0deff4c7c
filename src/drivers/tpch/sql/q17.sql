-- Small-quantity-order revenue; BRAND Brand#23, CONTAINER MED BOX. Decorrelated: each
-- part's average quantity aggregated once and joined, for the subquery per line item.
WITH parts AS (SELECT p_partkey FROM part WHERE p_brand = 'Brand#23' AND p_container = 'MED BOX'),
     average AS MATERIALIZED (
       SELECT l_partkey AS agg_partkey, 0.2 * avg(l_quantity) AS avg_quantity
       FROM lineitem WHERE l_partkey IN (SELECT p_partkey FROM parts) GROUP BY l_partkey)
SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, parts, average
WHERE p_partkey = l_partkey AND agg_partkey = l_partkey AND l_quantity < avg_quantity;
