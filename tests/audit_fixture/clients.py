"""The clients of other services, one per process, used by the views."""

import boto3
import requests

session = requests.Session()
session.headers.update({"User-Agent": "shop/1.0"})
s3 = boto3.client("s3")
BUCKET = "shop-invoices"
RATES_URL = "https://rates.example/latest"
