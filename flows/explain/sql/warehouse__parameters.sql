-- The run parameters the warehouse was built with (the config's [analysis]).
select * from run.parameters
