"""Celery tasks: they run in the worker; a view only queues them (.delay)."""

import smtplib

from .extensions import celery


@celery.task
def send_receipt(order_id):
    with smtplib.SMTP("localhost") as smtp:
        smtp.sendmail("shop@example.com", ["customer@example.com"], f"order {order_id}")
