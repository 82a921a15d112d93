"""Invoices: a PDF from the disk, an upload to S3."""

from flask import Blueprint, request, send_file
from flask.views import MethodView

from .clients import BUCKET, s3

blueprint = Blueprint("files", __name__)


@blueprint.get("/orders/<int:order_id>/invoice.pdf")
def download(order_id):
    return send_file(f"/srv/invoices/{order_id}.pdf")


@blueprint.post("/orders/<int:order_id>/invoice")
def upload(order_id):
    s3.upload_fileobj(request.files["invoice"], BUCKET, f"{order_id}.pdf")
    return {"stored": True}, 201


class Invoice(MethodView):
    def get(self, order_id):
        if not self.stored(order_id):
            return {"error": "no invoice"}, 404
        return {"url": self.link(order_id)}

    def stored(self, order_id):
        head = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{order_id}.pdf")
        return head["KeyCount"] > 0

    def link(self, order_id):
        """Signed here, with the client's credentials: no request."""
        return s3.generate_presigned_url("get_object", Params={"Key": f"{order_id}.pdf"})
