"""Small helpers the test modules share."""


def query(connection, sql, *params):
    """All rows of one statement."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
