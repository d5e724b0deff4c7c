-- Potential part promotion; COLOR forest, DATE 1994-01-01, NATION CANADA. Decorrelated:
-- each (part, supplier)'s shipped quantity aggregated once and joined, for the subquery per partsupp row.
WITH shipped AS MATERIALIZED (
  SELECT l_partkey, l_suppkey, 0.5 * sum(l_quantity) AS half
  FROM lineitem
  WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1994-01-01' + interval '1' year
    AND l_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')
  GROUP BY l_partkey, l_suppkey)
SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
    SELECT ps_suppkey FROM partsupp, shipped
    WHERE ps_partkey = l_partkey AND ps_suppkey = l_suppkey AND ps_availqty > half)
  AND s_nationkey = n_nationkey AND n_name = 'CANADA'
ORDER BY s_name;
