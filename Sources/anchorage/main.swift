print("anchorage")
