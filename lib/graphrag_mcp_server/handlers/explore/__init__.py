"""Looking around an index: statistics, entity/community/text unit views, graph export."""
