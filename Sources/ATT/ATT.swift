// ATT: PDUs, bearer, client (issue 4).
