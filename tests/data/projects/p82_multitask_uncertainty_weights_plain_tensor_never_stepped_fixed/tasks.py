TASKS = ["segment", "depth", "edges"]
OUT_DIMS = {"segment": 4, "depth": 1, "edges": 1}
