-- The months the warehouse holds, oldest first.
select month from fct_months_built
order by month
