// GATT: client procedures, names and characteristic formats (issue 4).
